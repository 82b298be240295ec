/**
 * The webhook handlers of the five built-in trackers (spec §4.2 rule 3), registered with the
 * receiver when this module is imported: tracker_a Jira, tracker_b GitHub, tracker_c GitLab,
 * tracker_d Linear, tracker_e Plane. Their API clients (polling, write-back) are in
 * lib/trackers/.
 */
import type { WebhookHandler } from "../handler.ts";
import { registerHandler } from "../registry.ts";
import { githubHandler } from "./github.ts";
import { gitlabHandler } from "./gitlab.ts";
import { jiraHandler } from "./jira.ts";
import { linearHandler } from "./linear.ts";
import { planeHandler } from "./plane.ts";

/** Built-in handlers by adapter name. */
export const BUILTIN_HANDLERS: ReadonlyMap<string, WebhookHandler> = new Map([
  ["tracker_a", jiraHandler],
  ["tracker_b", githubHandler],
  ["tracker_c", gitlabHandler],
  ["tracker_d", linearHandler],
  ["tracker_e", planeHandler],
]);

for (const [name, handler] of BUILTIN_HANDLERS) registerHandler(name, handler);
