/**
 * The five built-in trackers (spec §4.2 rule 3): their API clients here, their webhook handlers
 * in lib/webhooks/handlers/ (registered with the receiver when this module is imported).
 */
import "../webhooks/handlers/builtin.ts";
import type { TrackerAdapter } from "./adapter.ts";
import { githubAdapter } from "./github.ts";
import { gitlabAdapter } from "./gitlab.ts";
import { jiraAdapter } from "./jira.ts";
import { linearAdapter } from "./linear.ts";
import { planeAdapter } from "./plane.ts";

/** Built-in adapters by name: tracker_a Jira, tracker_b GitHub, tracker_c GitLab, tracker_d Linear, tracker_e Plane. */
export const BUILTIN_TRACKERS: ReadonlyMap<string, TrackerAdapter> = new Map(
  [jiraAdapter, githubAdapter, gitlabAdapter, linearAdapter, planeAdapter].map((a) => [a.name, a]),
);
