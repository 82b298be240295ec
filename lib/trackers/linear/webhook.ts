/**
 * tracker_d's webhooks, as Linear sends them: `Issue` data-change events signed with a raw-hex
 * HMAC-SHA256 in `Linear-Signature`, named by `Linear-Delivery`. The issue in `data` has the
 * GraphQL shape, so polling (adapter.ts beside this file) reads its query results with
 * {@link linearIssueTicket} too.
 */
import { obj, str } from "../../util/json_fields.ts";
import { isoTime, type Ticket, ticketLabels } from "../ticket.ts";
import type { HandlerContext, WebhookHandler } from "../../webhooks/handler.ts";

/** Linear's workflow state types that close a ticket. */
export const LINEAR_CLOSED_STATES: ReadonlySet<string> = new Set(["completed", "canceled"]);

/** A Linear issue (webhook `data` or GraphQL node) as a ticket. */
export function linearIssueTicket(
  issue: Record<string, unknown>,
  tracker: string,
  removed = false,
): Ticket {
  const id = str(issue.id);
  const labels = Array.isArray(issue.labels) ? issue.labels : obj(issue.labels).nodes;
  const team = str(obj(issue.team).key);
  return {
    tracker,
    key: id,
    ref: str(issue.identifier) || id,
    title: str(issue.title),
    body: str(issue.description),
    ...ticketLabels(labels),
    state: removed || LINEAR_CLOSED_STATES.has(str(obj(issue.state).type)) ? "closed" : "open",
    url: str(issue.url),
    raw: { updated_at: isoTime(issue.updatedAt), ids: { id, ...(team ? { team } : {}) } },
  };
}

function tickets(payload: unknown, _headers: Headers, context: HandlerContext): Ticket[] {
  const p = obj(payload);
  if (p.type !== "Issue") return [];
  const data = obj(p.data);
  if (!data.id) return [];
  const ticket = linearIssueTicket(data, context.tracker, p.action === "remove");
  if (!ticket.url) ticket.url = str(p.url);
  return [ticket]; // other teams' issues are answered `ignored` (lib/trackers/scope.ts)
}

/** Linear's webhooks as tracker_d. */
export const linearHandler: WebhookHandler<Ticket> = {
  scheme: "raw-hex",
  signatureHeaders: ["Tracker-D-Signature", "Linear-Signature"],
  deliveryHeaders: ["Tracker-D-Delivery", "Linear-Delivery"],
  tickets,
};
