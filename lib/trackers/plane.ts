/**
 * tracker_e speaks Plane: `issue` webhook events (raw-hex HMAC-SHA256 signature), the project
 * issues endpoint (newest update first, cursor pages) for polling, issue comments for
 * write-back. `project` is `<workspace-slug>/<project-uuid>`; the token is an API key
 * (`X-API-Key`). Plane's webhooks are workspace-wide: issues of other projects are ignored.
 */
import type { HandlerContext } from "../webhooks/handler.ts";
import { type ApiAccess, byUpdate, MAX_POLL_PAGES, type TrackerAdapter } from "./adapter.ts";
import { type RateLimit, requestJson } from "./http.ts";
import { htmlToText, isoTime, labelNames, obj, str, type Ticket } from "./ticket.ts";

const NAME = "tracker_e";
const CLOSED_GROUPS = new Set(["completed", "cancelled"]);

/** `slug/uuid` split (empty strings when malformed). */
export function planeProject(project: string | undefined): { slug: string; id: string } {
  const [slug = "", id = ""] = (project ?? "").split("/");
  return { slug, id };
}

/** The web app's origin for an API origin (`api.plane.so` → `app.plane.so`; self-hosted: same). */
function webOrigin(apiUrl: string): string {
  try {
    const u = new URL(apiUrl);
    u.hostname = u.hostname.replace(/^api\./, "app.");
    return u.origin;
  } catch {
    return "";
  }
}

/** A Plane issue (webhook `data` or REST result) as a ticket. */
function issueTicket(
  issue: Record<string, unknown>,
  tracker: string,
  context: { project?: string; apiUrl?: string },
  deleted = false,
): Ticket {
  const id = str(issue.id);
  const project = str(issue.project) || str(issue.project_id);
  const state = obj(issue.state_detail ?? issue.state);
  const seq = str(issue.sequence_id);
  const ident = str(obj(issue.project_detail).identifier);
  const { slug } = planeProject(context.project);
  const web = webOrigin(context.apiUrl ?? "https://api.plane.so");
  return {
    tracker,
    key: id,
    ref: str(issue.identifier) || (seq ? `${ident || "issue"}-${seq}` : id),
    title: str(issue.name),
    body: str(issue.description_stripped) || htmlToText(str(issue.description_html)),
    labels: labelNames(issue.labels),
    state: deleted || CLOSED_GROUPS.has(str(state.group)) ? "closed" : "open",
    url: slug && web && project ? `${web}/${slug}/projects/${project}/issues/${id}` : "",
    raw: { updated_at: isoTime(issue.updated_at), ids: { project, id } },
  };
}

function tickets(payload: unknown, _headers: Headers, context: HandlerContext): Ticket[] {
  const p = obj(payload);
  // v1 webhooks send `event: "issue"` and an `action`; v2 send `event: "workitem.<action>"`.
  const event = str(p.event);
  const v2 = /^(workitem|work_item|issue)\.(\w+)$/.exec(event);
  if (event !== "issue" && !v2) return [];
  const data = obj(p.data);
  if (!data.id) return [];
  const action = str(p.action) || (v2 ? v2[2] : "");
  const ticket = issueTicket(data, context.tracker, context, /^delete/.test(action));
  const wanted = planeProject(context.project).id;
  const project = str(ticket.raw.ids?.project);
  if (wanted && project && project !== wanted) return [];
  return [ticket];
}

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
  // Newest update first: the walk stops at the first issue not newer than `since`.
  while (more && pages < (access.maxPages ?? MAX_POLL_PAGES)) {
    const query = new URLSearchParams({
      expand: "labels,state",
      order_by: "-updated_at",
      per_page: "100",
    });
    if (cursor) query.set("cursor", cursor);
    const answer = await requestJson(access, `${projectUrl(access)}/issues/?${query}`, {
      headers: headersOf(access),
    });
    rate = answer.rate;
    pages++;
    const body = obj(answer.json);
    for (const result of Array.isArray(body.results) ? body.results : []) {
      const t = issueTicket(obj(result), NAME, access);
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
  webhook: {
    scheme: "raw-hex",
    signatureHeaders: ["X-Tracker-E-Signature", "X-Plane-Signature"],
    deliveryHeaders: ["X-Tracker-E-Delivery", "X-Plane-Delivery"],
    tickets,
  },
  poll,
  async comment(access, ids, text) {
    const html = text.split("\n").filter((l) => l.trim() !== "").map((l) =>
      `<p>${l.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")}</p>`
    ).join("");
    await requestJson(access, `${projectUrl(access)}/issues/${ids.id}/comments/`, {
      method: "POST",
      headers: { ...headersOf(access), "content-type": "application/json" },
      body: JSON.stringify({ comment_html: html }),
    });
  },
};
