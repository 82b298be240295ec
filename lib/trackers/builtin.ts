/**
 * The five built-in trackers (spec §4.2 rule 3), one folder each: `jira/` is tracker_a,
 * `github/` tracker_b, `gitlab/` tracker_c, `linear/` tracker_d, `plane/` tracker_e. Each
 * folder's `webhook.ts` reads its webhooks and `adapter.ts` polls, writes back and scopes by
 * project. Importing this module registers their webhook handlers with the receiver.
 */
import { registerHandler } from "../webhooks/registry.ts";
import type { TrackerAdapter } from "./adapter.ts";
import { githubAdapter } from "./github/adapter.ts";
import { gitlabAdapter } from "./gitlab/adapter.ts";
import { jiraAdapter } from "./jira/adapter.ts";
import { linearAdapter } from "./linear/adapter.ts";
import { planeAdapter } from "./plane/adapter.ts";

/** Built-in adapters by name: tracker_a Jira, tracker_b GitHub, tracker_c GitLab, tracker_d Linear, tracker_e Plane. */
export const BUILTIN_TRACKERS: ReadonlyMap<string, TrackerAdapter> = new Map(
  [jiraAdapter, githubAdapter, gitlabAdapter, linearAdapter, planeAdapter].map((a) => [a.name, a]),
);

for (const [name, adapter] of BUILTIN_TRACKERS) registerHandler(name, adapter.webhook);
