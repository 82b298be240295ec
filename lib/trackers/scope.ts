/**
 * The project scope of a tracker (pure): a ticket is taken only from the tracker's configured
 * `project` (GitHub `owner/name`, GitLab path or id, Jira project key, Linear team key, Plane
 * project), and write-back only ever goes there. One secret often signs deliveries of many
 * projects (an organisation webhook, a shared secret); without this rule a stranger's issue
 * would become a goal run in the user's repository and the user's token would comment on it.
 * A tracker without `project` (webhook-only, no write-back) takes what its secret signs; `doctor`
 * warns about it. A tracker added with a module decides in its own handler (it gets `project`).
 */
import type { TrackerAdapter } from "./adapter.ts";
import type { TicketIdentity } from "./ticket.ts";

/** What the scope rule needs of a tracker's settings. */
export interface ScopeSettings {
  name: string;
  adapter?: TrackerAdapter;
  project?: string;
}

/** Why `ticket` is outside the project of tracker `s`, or undefined when it may be taken. */
export function outsideProject(s: ScopeSettings, ticket: TicketIdentity): string | undefined {
  if (!s.adapter || !s.project || s.adapter.inProject(s.project, ticket)) return undefined;
  const found = s.adapter.projectOf(ticket);
  return `${ticket.ref || "the ticket"} is ${found ? `in ${found}` : "in no project it names"}, ` +
    `not in trackers.${s.name}.project (${s.project}): only that project's tickets are taken`;
}

/**
 * Why write-back to `ticket` is refused under `s`, or undefined: it needs a configured project
 * and a ticket in it (a task made before the rule, from another project, is never commented on).
 */
export function writeBackRefusal(s: ScopeSettings, ticket: TicketIdentity): string | undefined {
  if (!s.project) return `trackers.${s.name}.project is not set: comments go only to that project`;
  return outsideProject(s, ticket);
}
