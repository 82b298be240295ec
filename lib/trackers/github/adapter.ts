/**
 * tracker_b speaks GitHub: the REST issues list with `since` for polling, issue comments and
 * ticket moves (move.ts) for write-back; its webhooks (`issues` events) are read by webhook.ts
 * beside this file. `project` is the repository, `owner/name`.
 */
import { githubHandler, githubIssueTicket } from "./webhook.ts";
import { githubMove, nextLink } from "./move.ts";
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

const NAME = "tracker_b";

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
  const http = apiClient(access, "GitHub");
  while (url && pages < (access.maxPages ?? MAX_POLL_PAGES)) {
    const answer = await http.request(url, { headers: headersOf(access) });
    rate = answer.rate;
    pages++;
    const json = answer.json();
    for (const issue of Array.isArray(json) ? json : []) {
      const t = githubIssueTicket(obj(issue), { repo: access.project, tracker: NAME });
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
  webhook: githubHandler,
  poll,
  projectOf: (t) => str(t.ids?.repo),
  inProject: (project, t) => sameProject(str(t.ids?.repo), project),
  async comment(access, ids, text) {
    const url = `${base(access)}/repos/${access.project}/issues/${Number(ids.number)}/comments`;
    await apiClient(access, "GitHub").request(url, {
      method: "POST",
      headers: headersOf(access),
      json: { body: text },
    });
  },
  moveTicket: (access, ids, move) =>
    githubMove(access, { ids, move, headers: headersOf(access), base: base(access) }),
};
