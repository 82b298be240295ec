/**
 * tracker_a speaks Jira Cloud: the enhanced JQL search (`/rest/api/3/search/jql`,
 * `updated >= -Nm`) for polling, issue comments in Atlassian Document Format and workflow
 * transitions (move.ts) for write-back; its webhooks (`jira:issue_*` events) are read by
 * webhook.ts beside this file. `api_url` is the site (`https://acme.atlassian.net`), `project`
 * the project key; `email_env` selects Basic auth (Cloud API tokens), otherwise the token is
 * sent as a bearer (personal access tokens).
 */
import { jiraHandler, jiraIssueTicket } from "./webhook.ts";
import { jiraMove } from "./move.ts";
import {
  type ApiAccess,
  apiClient,
  byUpdate,
  keyPrefix,
  MAX_POLL_PAGES,
  sameProject,
  type TrackerAdapter,
} from "../adapter.ts";
import type { RateLimit } from "../../http/rate_limit.ts";
import { obj, str } from "../../util/json_fields.ts";
import type { Ticket } from "../ticket.ts";

const NAME = "tracker_a";
const FIELDS = "summary,description,labels,status,updated,project";

/** The project key of a Jira ticket: `fields.project.key` when sent, else its key's prefix. */
function projectKey(t: { ref: string; ids?: Record<string, string | number> }): string {
  return str(t.ids?.project) || keyPrefix(str(t.ids?.key) || t.ref);
}

function headersOf(access: ApiAccess): HeadersInit {
  const auth = access.email
    ? `Basic ${btoa(`${access.email}:${access.token}`)}`
    : `Bearer ${access.token}`;
  return { accept: "application/json", authorization: auth };
}

/** The JQL of a poll: open issues first, then issues updated since (timezone-proof minutes). */
function pollJql(project: string, since: string | undefined, nowMs: number): string {
  const scope = `project = "${project.replaceAll('"', '\\"')}"`;
  if (!since) return `${scope} AND statusCategory != Done ORDER BY updated ASC`;
  const minutes = Math.max(1, Math.ceil((nowMs - Date.parse(since)) / 60_000) + 1);
  return `${scope} AND updated >= -${minutes}m ORDER BY updated ASC`;
}

async function poll(access: ApiAccess, since: string | undefined) {
  const site = access.apiUrl.replace(/\/+$/, "");
  const out: Ticket[] = [];
  let rate: RateLimit = {};
  let token: string | undefined;
  let pages = 0;
  const jql = pollJql(access.project, since, access.now());
  const http = apiClient(access, "Jira");
  do {
    const query = new URLSearchParams({ jql, fields: FIELDS, maxResults: "100" });
    if (token) query.set("nextPageToken", token);
    const answer = await http.request(`${site}/rest/api/3/search/jql?${query}`, {
      headers: headersOf(access),
    });
    rate = answer.rate;
    pages++;
    const body = obj(answer.json());
    for (const issue of Array.isArray(body.issues) ? body.issues : []) {
      const t = jiraIssueTicket(obj(issue), { tracker: NAME, site });
      // JQL works in minutes: drop what is not newer than the cursor.
      if (!since || (t.raw.updated_at ?? "") > since) out.push(t);
    }
    token = body.isLast === true ? undefined : str(body.nextPageToken) || undefined;
  } while (token && pages < (access.maxPages ?? MAX_POLL_PAGES));
  return { tickets: byUpdate(out), rate, truncated: token !== undefined };
}

/** A comment body in Atlassian Document Format, one paragraph per line. */
function adfComment(text: string): Record<string, unknown> {
  return {
    type: "doc",
    version: 1,
    content: text.split("\n").filter((l) => l.trim() !== "").map((line) => ({
      type: "paragraph",
      content: [{ type: "text", text: line }],
    })),
  };
}

/** Jira as tracker_a. */
export const jiraAdapter: TrackerAdapter = {
  name: NAME,
  product: "Jira",
  projectHint: "the project key (e.g. PROJ); api_url is the site, e.g. https://acme.atlassian.net",
  tokenOptional: false,
  webhook: jiraHandler,
  poll,
  projectOf: projectKey,
  inProject: (project, t) => sameProject(projectKey(t), project),
  async comment(access, ids, text) {
    const site = access.apiUrl.replace(/\/+$/, "");
    await apiClient(access, "Jira").request(
      `${site}/rest/api/3/issue/${encodeURIComponent(String(ids.key))}/comment`,
      { method: "POST", headers: headersOf(access), json: { body: adfComment(text) } },
    );
  },
  moveTicket: (access, ids, move) =>
    jiraMove(access, {
      ids,
      move,
      headers: headersOf(access),
      site: access.apiUrl.replace(/\/+$/, ""),
    }),
};
