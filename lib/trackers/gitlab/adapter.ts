/**
 * tracker_c speaks GitLab: the project issues API with `updated_after` for polling, issue notes
 * and ticket moves (move.ts) for write-back; its webhooks (the issue hook) are read by
 * webhook.ts beside this file. `project` is the project path (`group/name`) or its numeric id;
 * `api_url` the instance (default https://gitlab.com).
 */
import { gitlabHandler } from "./webhook.ts";
import { gitlabMove } from "./move.ts";
import {
  type ApiAccess,
  apiClient,
  byUpdate,
  MAX_POLL_PAGES,
  sameProject,
  type TrackerAdapter,
} from "../adapter.ts";
import type { RateLimit } from "../../http/rate_limit.ts";
import { obj, str } from "../../util/json_fields.ts";
import { isoTime, labelNames, type Ticket } from "../ticket.ts";

const NAME = "tracker_c";

/** A REST issue as a ticket. */
function restTicket(issue: Record<string, unknown>): Ticket {
  const iid = Number(issue.iid);
  const ref = str(obj(issue.references).full) || `${issue.project_id}#${iid}`;
  return {
    tracker: NAME,
    key: ref,
    ref,
    title: str(issue.title),
    body: str(issue.description),
    labels: labelNames(issue.labels),
    state: issue.state === "opened" ? "open" : "closed",
    url: str(issue.web_url),
    raw: {
      updated_at: isoTime(issue.updated_at),
      ids: { project_id: Number(issue.project_id), iid },
    },
  };
}

function headersOf(access: ApiAccess): HeadersInit {
  return access.token ? { "private-token": access.token } : {};
}

/**
 * The REST base: `api_url` plus `/api/v4`. An `api_url` that already ends in `/api/v4` (as
 * `landing.api_url` is written for the same GitLab) is taken as that base, not doubled.
 */
function api(access: ApiAccess): string {
  return `${access.apiUrl.replace(/\/+$/, "").replace(/\/api\/v4$/i, "")}/api/v4`;
}

async function poll(access: ApiAccess, since: string | undefined) {
  const query = new URLSearchParams({
    state: since ? "all" : "opened",
    order_by: "updated_at",
    sort: "asc",
    per_page: "100",
  });
  if (since) query.set("updated_after", since);
  const out: Ticket[] = [];
  let rate: RateLimit = {};
  let page: string | null = "1";
  let pages = 0;
  const http = apiClient(access, "GitLab");
  while (page && pages < (access.maxPages ?? MAX_POLL_PAGES)) {
    query.set("page", page);
    const answer = await http.request(
      `${api(access)}/projects/${encodeURIComponent(access.project)}/issues?${query}`,
      { headers: headersOf(access) },
    );
    rate = answer.rate;
    pages++;
    const json = answer.json();
    for (const issue of Array.isArray(json) ? json : []) {
      out.push(restTicket(obj(issue)));
    }
    page = answer.headers.get("x-next-page") || null;
  }
  return { tickets: byUpdate(out), rate, truncated: page !== null };
}

/** GitLab as tracker_c. */
export const gitlabAdapter: TrackerAdapter = {
  name: NAME,
  product: "GitLab",
  defaultApiUrl: "https://gitlab.com",
  projectHint: "the project path (group/name) or numeric id",
  tokenOptional: true,
  webhook: gitlabHandler,
  poll,
  // A ticket's ref is `<path>#<iid>`; a numeric `project` is compared with the project id.
  projectOf: (t) => t.ref.replace(/#\d+$/, ""),
  inProject: (project, t) =>
    /^\d+$/.test(project)
      ? String(t.ids?.project_id ?? "") === project
      : sameProject(t.ref.replace(/#\d+$/, ""), project),
  async comment(access, ids, text) {
    const project = encodeURIComponent(access.project);
    await apiClient(access, "GitLab").request(
      `${api(access)}/projects/${project}/issues/${Number(ids.iid)}/notes`,
      { method: "POST", headers: headersOf(access), json: { body: text } },
    );
  },
  moveTicket: (access, ids, move) =>
    gitlabMove(access, { ids, move, headers: headersOf(access), api: api(access) }),
};
