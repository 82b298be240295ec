/**
 * tracker_b's webhooks, as GitHub sends them: `issues` events (the `X-GitHub-Event` header, or
 * `X-Tracker-B-Event`; a delivery naming no event is not an issue event) signed with HMAC-SHA256
 * in `X-Hub-Signature-256: sha256=<hex>`, named by `X-GitHub-Delivery`. The issue object is the
 * REST shape, so polling (adapter.ts beside this file) reads its issue lists with
 * {@link githubIssueTicket} too. Pull-request, review, check and status events wake the
 * pull-request landing (`hostEvent`).
 */
import { isoTime, labelNames, obj, str, type Ticket } from "../ticket.ts";
import type { HandlerContext, HostEvent, WebhookHandler } from "../../webhooks/handler.ts";

/** A REST/webhook issue object of `repo` as a ticket (undefined for pull requests). */
export function githubIssueTicket(
  issue: Record<string, unknown>,
  repo: string,
  tracker: string,
  deleted = false,
): Ticket | undefined {
  if (issue.pull_request !== undefined || issue.number === undefined) return undefined;
  const number = Number(issue.number);
  const ref = `${repo}#${number}`;
  return {
    tracker,
    key: ref,
    ref,
    title: str(issue.title),
    body: str(issue.body),
    labels: labelNames(issue.labels),
    state: deleted || issue.state === "closed" ? "closed" : "open",
    url: str(issue.html_url),
    raw: { updated_at: isoTime(issue.updated_at), ids: { repo, number } },
  };
}

function tickets(payload: unknown, headers: Headers, context: HandlerContext): Ticket[] {
  // GitHub names every event; a body that merely looks like an issue (an `issue_comment`, a
  // `sub_issues` event) is not one without the header saying so.
  const event = headers.get("x-tracker-b-event") ?? headers.get("x-github-event");
  if (event?.trim() !== "issues") return [];
  const p = obj(payload);
  const repo = str(obj(p.repository).full_name);
  const issue = obj(p.issue);
  if (!repo || Object.keys(issue).length === 0) return [];
  const ticket = githubIssueTicket(issue, repo, context.tracker, p.action === "deleted");
  return ticket ? [ticket] : [];
}

/** Events that change what a pull request waits for (pull-request landing, lib/landing). */
const PULL_REQUEST_EVENTS = new Set([
  "pull_request",
  "pull_request_review",
  "check_run",
  "check_suite",
  "status",
  "merge_group",
]);

function hostEvent(payload: unknown, headers: Headers): HostEvent | undefined {
  const event = (headers.get("x-tracker-b-event") ?? headers.get("x-github-event"))?.trim();
  if (!event || !PULL_REQUEST_EVENTS.has(event)) return undefined;
  const repository = obj(obj(payload).repository);
  const repo = str(repository.full_name);
  return repo ? { provider: "github", repo, project_id: Number(repository.id ?? 0) } : undefined;
}

/** GitHub's webhooks as tracker_b. */
export const githubHandler: WebhookHandler<Ticket> = {
  scheme: "hub-sha256",
  signatureHeaders: ["X-Hub-Signature-256"],
  deliveryHeaders: ["X-Tracker-B-Delivery", "X-GitHub-Delivery"],
  tickets,
  hostEvent,
};
