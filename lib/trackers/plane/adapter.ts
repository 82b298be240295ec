/**
 * tracker_e speaks Plane: the project issues endpoint (newest update first, cursor pages) for
 * polling, issue comments and state changes (move.ts) for write-back; its webhooks (`issue` /
 * `workitem.*` events) are read by webhook.ts beside this file. `project` is
 * `<workspace-slug>/<project-uuid>`; the token is an API key (`X-API-Key`).
 */
import { planeHandler, planeIssueTicket, planeProject } from "./webhook.ts";
import { planeMove } from "./move.ts";
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
import type { Ticket } from "../ticket.ts";

const NAME = "tracker_e";

function headersOf(access: ApiAccess): HeadersInit {
  return { "x-api-key": access.token, accept: "application/json" };
}

function projectUrl(access: ApiAccess): string {
  const { slug, id } = planeProject(access.project);
  return `${access.apiUrl.replace(/\/+$/, "")}/api/v1/workspaces/${slug}/projects/${id}`;
}

async function poll(access: ApiAccess, since: string | undefined) {
  const out: Ticket[] = [];
  let rate: RateLimit = {};
  let cursor: string | undefined;
  let pages = 0;
  let more = true;
  const http = apiClient(access, "Plane");
  // Newest update first: the walk stops at the first issue not newer than `since`.
  while (more && pages < (access.maxPages ?? MAX_POLL_PAGES)) {
    const query = new URLSearchParams({
      expand: "labels,state",
      order_by: "-updated_at",
      per_page: "100",
    });
    if (cursor) query.set("cursor", cursor);
    const answer = await http.request(`${projectUrl(access)}/issues/?${query}`, {
      headers: headersOf(access),
    });
    rate = answer.rate;
    pages++;
    const body = obj(answer.json());
    for (const result of Array.isArray(body.results) ? body.results : []) {
      const t = planeIssueTicket(obj(result), {
        tracker: NAME,
        project: access.project,
        apiUrl: access.apiUrl,
      });
      if (since && (t.raw.updated_at ?? "") <= since) {
        more = false;
        break;
      }
      if (since || t.state === "open") out.push(t);
    }
    cursor = str(body.next_cursor) || undefined;
    if (body.next_page_results !== true || !cursor) more = false;
  }
  return { tickets: byUpdate(out), rate, truncated: more };
}

/** Plane as tracker_e. */
export const planeAdapter: TrackerAdapter = {
  name: NAME,
  product: "Plane",
  defaultApiUrl: "https://api.plane.so",
  projectHint: "<workspace-slug>/<project-uuid>",
  tokenOptional: false,
  webhook: planeHandler,
  poll,
  // `project` is `<workspace-slug>/<project-uuid>`; tickets name the uuid.
  projectOf: (t) => str(t.ids?.project),
  inProject: (project, t) => sameProject(str(t.ids?.project), planeProject(project).id),
  async comment(access, ids, text) {
    const html = text.split("\n").filter((l) => l.trim() !== "").map((l) =>
      `<p>${l.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")}</p>`
    ).join("");
    await apiClient(access, "Plane").request(
      `${projectUrl(access)}/issues/${encodeURIComponent(String(ids.id))}/comments/`,
      { method: "POST", headers: headersOf(access), json: { comment_html: html } },
    );
  },
  moveTicket: (access, ids, move) =>
    planeMove(access, { ids, move, headers: headersOf(access), projectUrl: projectUrl(access) }),
};
