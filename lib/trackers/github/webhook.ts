/**
 * tracker_b's webhooks, as GitHub sends them: `issues` events (the `X-GitHub-Event` header, or
 * `X-Tracker-B-Event`; a delivery naming no event is not an issue event) signed with HMAC-SHA256
 * in `X-Hub-Signature-256: sha256=<hex>`, named by `X-GitHub-Delivery`. The issue object is the
 * REST shape, so polling (adapter.ts beside this file) reads its issue lists with
 * {@link githubIssueTicket} too. Pull-request, review, check and status events wake the
 * pull-request landing (`hostEvent`).
 */
import { arr, obj, str } from "../../util/json_fields.ts";
import { isoTime, type Ticket, ticketLabels } from "../ticket.ts";
import {
  type HandlerContext,
  type HostEvent,
  type HostEventKeys,
  hostEventKeys,
  type WebhookHandler,
} from "../../webhooks/handler.ts";

/** Where a GitHub issue comes from, for {@link githubIssueTicket}. */
export interface GithubTicketContext {
  /** `owner/name`. */
  repo: string;
  tracker: string;
  /** The issue was deleted (its ticket is closed); default false. */
  deleted?: boolean;
}

/** A REST/webhook issue object of `repo` as a ticket (undefined for pull requests). */
export function githubIssueTicket(
  issue: Record<string, unknown>,
  { repo, tracker, deleted = false }: GithubTicketContext,
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
    ...ticketLabels(issue.labels),
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
  const ticket = githubIssueTicket(issue, {
    repo,
    tracker: context.tracker,
    deleted: p.action === "deleted",
  });
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

/** Which pull requests a GitHub event concerns (check suites and statuses name their head SHA). */
function pullRequestKeys(event: string, p: Record<string, unknown>): HostEventKeys {
  const pr = obj(p.pull_request);
  const numbersOf = (prs: unknown) => arr(prs).map((x) => obj(x).number);
  switch (event) {
    case "pull_request":
    case "pull_request_review":
      return {
        numbers: [pr.number ?? p.number],
        shas: [obj(pr.head).sha],
        branches: [obj(pr.head).ref],
        mergedInto: p.action === "closed" && pr.merged === true ? obj(pr.base).ref : undefined,
      };
    case "check_run": {
      const run = obj(p.check_run);
      return {
        numbers: numbersOf(run.pull_requests),
        shas: [run.head_sha],
        branches: [obj(run.check_suite).head_branch],
      };
    }
    case "check_suite": {
      const suite = obj(p.check_suite);
      return {
        numbers: numbersOf(suite.pull_requests),
        shas: [suite.head_sha],
        branches: [suite.head_branch],
      };
    }
    case "status":
      return { shas: [p.sha], branches: arr(p.branches).map((b) => obj(b).name) };
    default:
      return {}; // merge_group: every pull request is looked at
  }
}

function hostEvent(payload: unknown, headers: Headers): HostEvent | undefined {
  const event = (headers.get("x-tracker-b-event") ?? headers.get("x-github-event"))?.trim();
  if (!event || !PULL_REQUEST_EVENTS.has(event)) return undefined;
  const p = obj(payload);
  const repository = obj(p.repository);
  const repo = str(repository.full_name);
  if (!repo) return undefined;
  return {
    provider: "github",
    repo,
    project_id: Number(repository.id ?? 0),
    ...hostEventKeys(pullRequestKeys(event, p)),
  };
}

/** GitHub's webhooks as tracker_b. */
export const githubHandler: WebhookHandler<Ticket> = {
  scheme: "hub-sha256",
  signatureHeaders: ["X-Hub-Signature-256"],
  deliveryHeaders: ["X-Tracker-B-Delivery", "X-GitHub-Delivery"],
  tickets,
  hostEvent,
};
