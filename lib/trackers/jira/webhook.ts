/**
 * tracker_a's webhooks, as Jira Cloud sends them: `jira:issue_*` events signed with HMAC-SHA256
 * behind a `sha256=` prefix, named by `X-Atlassian-Webhook-Identifier`. The issue object is the
 * REST shape, so polling (adapter.ts beside this file) reads its search results with
 * {@link jiraIssueTicket} too.
 */
import { obj, str } from "../../util/json_fields.ts";
import { adfToText, isoTime, type Ticket, ticketLabels } from "../ticket.ts";
import type { HandlerContext, WebhookHandler } from "../../webhooks/handler.ts";

/** Where a Jira issue comes from, for {@link jiraIssueTicket}. */
export interface JiraTicketContext {
  tracker: string;
  /** The configured site (its links, when the issue has no `self`). */
  site: string;
  /** The issue was deleted (its ticket is closed); default false. */
  deleted?: boolean;
}

/** A Jira issue (webhook or REST shape) of the site `site` as a ticket. */
export function jiraIssueTicket(
  issue: Record<string, unknown>,
  { tracker, site, deleted = false }: JiraTicketContext,
): Ticket {
  const fields = obj(issue.fields);
  const key = str(issue.key);
  const category = str(obj(obj(fields.status).statusCategory).key);
  const project = str(obj(fields.project).key);
  let origin = site.replace(/\/+$/, "");
  try {
    origin = new URL(str(issue.self)).origin;
  } catch { /* no self link: use the configured site */ }
  return {
    tracker,
    key: str(issue.id) || key,
    ref: key,
    title: str(fields.summary),
    body: adfToText(fields.description).trim(),
    ...ticketLabels(fields.labels),
    state: deleted || category === "done" ? "closed" : "open",
    url: origin && key ? `${origin}/browse/${key}` : "",
    raw: {
      updated_at: isoTime(fields.updated),
      ids: { key, id: str(issue.id), ...(project ? { project } : {}) },
    },
  };
}

function tickets(payload: unknown, _headers: Headers, context: HandlerContext): Ticket[] {
  const p = obj(payload);
  const event = str(p.webhookEvent);
  if (!event.startsWith("jira:issue_")) return [];
  const issue = obj(p.issue);
  if (!issue.key) return [];
  return [
    jiraIssueTicket(issue, {
      tracker: context.tracker,
      site: context.apiUrl ?? "",
      deleted: event === "jira:issue_deleted",
    }),
  ];
}

/** Jira's webhooks as tracker_a. */
export const jiraHandler: WebhookHandler<Ticket> = {
  scheme: "hub-sha256",
  signatureHeaders: ["X-Hub-Signature-256", "X-Hub-Signature"],
  deliveryHeaders: ["X-Tracker-A-Webhook-Identifier", "X-Atlassian-Webhook-Identifier"],
  tickets,
};
