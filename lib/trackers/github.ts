/**
 * tracker_b speaks GitHub: `issues` webhook events (HMAC-SHA256 `sha256=` signature), the REST
 * issues list with `since` for polling, issue comments for write-back. `project` is the
 * repository, `owner/name`.
 */
import type { HandlerContext } from "../webhooks/handler.ts";
import { type ApiAccess, byUpdate, MAX_POLL_PAGES, type TrackerAdapter } from "./adapter.ts";
import { type RateLimit, requestJson } from "./http.ts";
import { isoTime, labelNames, obj, str, type Ticket } from "./ticket.ts";

const NAME = "tracker_b";

/** A REST/webhook issue object of `repo` as a ticket (undefined for pull requests). */
function issueTicket(
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
  const event = headers.get("x-tracker-b-event") ?? headers.get("x-github-event");
  const p = obj(payload);
  if (event !== null && event !== "issues") return [];
  if (event === null && (p.comment !== undefined || typeof p.action !== "string")) return [];
  const repo = str(obj(p.repository).full_name);
  const issue = obj(p.issue);
  if (!repo || Object.keys(issue).length === 0) return [];
  const ticket = issueTicket(issue, repo, context.tracker, p.action === "deleted");
  return ticket ? [ticket] : [];
}

function headersOf(access: ApiAccess): HeadersInit {
  return {
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    "user-agent": "service-trackers",
    ...(access.token ? { authorization: `Bearer ${access.token}` } : {}),
  };
}

function base(access: ApiAccess): string {
  return access.apiUrl.replace(/\/+$/, "");
}

/** The `rel="next"` URL of a GitHub `Link` header. */
export function nextLink(link: string | null): string | undefined {
  for (const part of (link ?? "").split(",")) {
    const m = /<([^>]+)>;\s*rel="next"/.exec(part);
    if (m) return m[1];
  }
  return undefined;
}

async function poll(access: ApiAccess, since: string | undefined) {
  const query = new URLSearchParams({
    state: since ? "all" : "open",
    sort: "updated",
    direction: "asc",
    per_page: "100",
  });
  if (since) query.set("since", since);
  let url: string | undefined = `${base(access)}/repos/${access.project}/issues?${query}`;
  const out: Ticket[] = [];
  let rate: RateLimit = {};
  let pages = 0;
  while (url && pages < (access.maxPages ?? MAX_POLL_PAGES)) {
    const answer = await requestJson(access, url, { headers: headersOf(access) });
    rate = answer.rate;
    pages++;
    for (const issue of Array.isArray(answer.json) ? answer.json : []) {
      const t = issueTicket(obj(issue), access.project, NAME);
      if (t) out.push(t);
    }
    url = nextLink(answer.headers.get("link"));
  }
  return { tickets: byUpdate(out), rate, truncated: url !== undefined };
}

/** GitHub as tracker_b. */
export const githubAdapter: TrackerAdapter = {
  name: NAME,
  product: "GitHub",
  defaultApiUrl: "https://api.github.com",
  projectHint: "the repository as owner/name",
  tokenOptional: true,
  webhook: {
    scheme: "hub-sha256",
    signatureHeaders: ["X-Hub-Signature-256"],
    deliveryHeaders: ["X-Tracker-B-Delivery", "X-GitHub-Delivery"],
    tickets,
  },
  poll,
  async comment(access, ids, text) {
    await requestJson(access, `${base(access)}/repos/${ids.repo}/issues/${ids.number}/comments`, {
      method: "POST",
      headers: { ...headersOf(access), "content-type": "application/json" },
      body: JSON.stringify({ body: text }),
    });
  },
};
