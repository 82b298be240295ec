/**
 * tracker_d speaks Linear: the GraphQL `issues` query filtered by `updatedAt` for polling,
 * `commentCreate` for write-back; its webhooks (`Issue` data changes) are read by webhook.ts
 * beside this file. `project` is the team key (e.g. `ENG`); the token is a personal API key
 * (sent as is) or `Bearer <oauth token>`.
 */
import { LINEAR_CLOSED_STATES, linearHandler, linearIssueTicket } from "./webhook.ts";
import {
  type ApiAccess,
  apiClient,
  byUpdate,
  keyPrefix,
  MAX_POLL_PAGES,
  sameProject,
  type TrackerAdapter,
} from "../adapter.ts";
import { HttpApiError } from "../../http/api_error.ts";
import type { RateLimit } from "../../http/rate_limit.ts";
import { arr, obj, str } from "../../util/json_fields.ts";
import type { Ticket } from "../ticket.ts";

const NAME = "tracker_d";

/** The team of a Linear ticket: `team.key` when sent, else its identifier's prefix (`ENG-12`). */
function teamKey(t: { ref: string; ids?: Record<string, string | number> }): string {
  return str(t.ids?.team) || keyPrefix(t.ref);
}

const ISSUES_QUERY = `query Issues($filter: IssueFilter, $after: String) {
  issues(first: 100, after: $after, filter: $filter, orderBy: updatedAt) {
    nodes {
      id identifier title description url updatedAt state { type } team { key }
      labels { nodes { name } }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

function headersOf(access: ApiAccess): HeadersInit {
  return { authorization: access.token };
}

/** Run a GraphQL operation; GraphQL errors (RATELIMITED included) become {@link HttpApiError}s. */
async function graphql(
  access: ApiAccess,
  query: string,
  variables: Record<string, unknown>,
): Promise<{ rate: RateLimit; data: Record<string, unknown> }> {
  const http = apiClient(access, "Linear");
  let answer;
  try {
    answer = await http.request(access.apiUrl, {
      method: "POST",
      headers: headersOf(access),
      json: { query, variables },
    });
  } catch (e) {
    // Linear answers a rate limit with HTTP 400 and extensions.code RATELIMITED.
    if (e instanceof HttpApiError && /RATELIMITED/.test(e.body)) {
      throw new HttpApiError(e.message, { ...e, status: 429, code: "RATELIMITED", cause: e });
    }
    throw e;
  }
  const body = obj(answer.json());
  const errors = arr(body.errors);
  if (errors.length > 0) {
    const first = obj(errors[0]);
    const code = str(obj(first.extensions).code);
    throw new HttpApiError(`Linear GraphQL: ${str(first.message) || code}`, {
      status: code === "RATELIMITED" ? 429 : 400,
      ...(code ? { code } : {}),
      method: "POST",
      url: access.apiUrl,
      apiMessage: str(first.message),
      rate: answer.rate,
    });
  }
  return { rate: answer.rate, data: obj(body.data) };
}

async function poll(access: ApiAccess, since: string | undefined) {
  const filter: Record<string, unknown> = { team: { key: { eq: access.project } } };
  if (since) filter.updatedAt = { gt: since };
  else filter.state = { type: { nin: [...LINEAR_CLOSED_STATES] } };
  const out: Ticket[] = [];
  let rate: RateLimit = {};
  let after: string | undefined;
  let pages = 0;
  let more = true;
  while (more && pages < (access.maxPages ?? MAX_POLL_PAGES)) {
    const answer = await graphql(access, ISSUES_QUERY, { filter, after });
    rate = answer.rate;
    pages++;
    const issues = obj(answer.data.issues);
    for (const node of arr(issues.nodes)) out.push(linearIssueTicket(obj(node), NAME));
    const info = obj(issues.pageInfo);
    more = info.hasNextPage === true;
    after = str(info.endCursor) || undefined;
  }
  return { tickets: byUpdate(out), rate, truncated: more };
}

const COMMENT_MUTATION = `mutation Comment($input: CommentCreateInput!) {
  commentCreate(input: $input) { success }
}`;

/** Linear as tracker_d. */
export const linearAdapter: TrackerAdapter = {
  name: NAME,
  product: "Linear",
  defaultApiUrl: "https://api.linear.app/graphql",
  projectHint: "the team key (e.g. ENG)",
  tokenOptional: false,
  webhook: linearHandler,
  poll,
  projectOf: teamKey,
  inProject: (project, t) => sameProject(teamKey(t), project),
  async comment(access, ids, text) {
    const answer = await graphql(access, COMMENT_MUTATION, {
      input: { issueId: ids.id, body: text },
    });
    if (obj(answer.data.commentCreate).success !== true) {
      throw new HttpApiError("Linear commentCreate did not succeed", {
        status: 400,
        method: "POST",
        url: access.apiUrl,
        rate: answer.rate,
      });
    }
  },
};
