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
import type { HostEvent } from "../webhooks/handler.ts";

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

/** Where the pull-request landing opens its pull requests (`landing.provider`, `landing.repo`). */
export interface LandingRepo {
  provider: string;
  repo: string;
}

/**
 * Why a code host's pull-request event (a pull request, its checks or reviews) is outside what
 * tracker `s` serves, or undefined when it may be taken: it must name the tracker's `project` or
 * the repository the landing opens pull requests in (`landing.repo`, same provider), by path
 * (case-insensitive) or GitLab's numeric id. With neither configured it is taken, as tickets are.
 */
export function hostEventOutside(
  s: ScopeSettings,
  event: HostEvent,
  landing?: LandingRepo,
): string | undefined {
  const repos: string[] = [];
  if (s.project) repos.push(`trackers.${s.name}.project (${s.project})`);
  const lands = landing && landing.provider === event.provider ? landing.repo : undefined;
  if (lands) repos.push(`landing.repo (${lands})`);
  if (repos.length === 0) return undefined;
  const names = [event.repo, event.project_id > 0 ? String(event.project_id) : ""]
    .filter(Boolean).map((n) => n.toLowerCase());
  const named = (wanted: string) => names.includes(wanted.toLowerCase());
  if ((s.project && named(s.project)) || (lands && named(lands))) return undefined;
  return `a ${event.provider} pull-request event of ${event.repo || "no repository it names"}, ` +
    `not of ${repos.join(" or ")}: only those wake the landing`;
}
