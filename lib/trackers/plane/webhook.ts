/**
 * tracker_e's webhooks, as Plane sends them: `issue` events (v1, with an `action`) and
 * `workitem.<action>` events (v2), signed with a raw-hex HMAC-SHA256 in `X-Plane-Signature`,
 * named by `X-Plane-Delivery`. Plane's webhooks are workspace-wide: issues of other projects
 * are answered `ignored` by the project scope. The issue in `data` has the REST shape, so
 * polling (adapter.ts beside this file) reads its results with {@link planeIssueTicket} too.
 */
import { obj, str } from "../../util/json_fields.ts";
import { htmlToText, isoTime, type Ticket, ticketLabels } from "../ticket.ts";
import type { HandlerContext, WebhookHandler } from "../../webhooks/handler.ts";

/** State groups of a done issue. */
export const PLANE_CLOSED_GROUPS: ReadonlySet<string> = new Set(["completed", "cancelled"]);

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

/** Where a Plane issue comes from, for {@link planeIssueTicket}. */
export interface PlaneTicketContext {
  tracker: string;
  /** `<workspace slug>/<project id>` (its links). */
  project?: string;
  /** The API's origin (default `https://api.plane.so`). */
  apiUrl?: string;
  /** The issue was deleted (its ticket is closed); default false. */
  deleted?: boolean;
}

/** A Plane issue (webhook `data` or REST result) as a ticket. */
export function planeIssueTicket(
  issue: Record<string, unknown>,
  context: PlaneTicketContext,
): Ticket {
  const { tracker, deleted = false } = context;
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
    ...ticketLabels(issue.labels),
    state: deleted || PLANE_CLOSED_GROUPS.has(str(state.group)) ? "closed" : "open",
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
  // Other projects' issues (the webhooks are workspace-wide) are answered `ignored` by the
  // project scope (lib/trackers/scope.ts).
  return [planeIssueTicket(data, {
    tracker: context.tracker,
    project: context.project,
    apiUrl: context.apiUrl,
    deleted: /^delete/.test(action),
  })];
}

/** Plane's webhooks as tracker_e. */
export const planeHandler: WebhookHandler<Ticket> = {
  scheme: "raw-hex",
  signatureHeaders: ["X-Tracker-E-Signature", "X-Plane-Signature"],
  deliveryHeaders: ["X-Tracker-E-Delivery", "X-Plane-Delivery"],
  tickets,
};
