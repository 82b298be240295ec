/**
 * tracker_d speaks Linear: the GraphQL `issues` query filtered by `updatedAt` for polling,
 * `commentCreate` and `issueUpdate` (move.ts) for write-back; its webhooks (`Issue` data
 * changes) are read by webhook.ts beside this file. `project` is the team key (e.g. `ENG`); the
 * token is a personal API key (sent as is) or `Bearer <oauth token>`.
 */
import { LINEAR_CLOSED_STATES, linearHandler, linearIssueTicket } from "./webhook.ts";
import {
  type ApiAccess,
  byUpdate,
  keyPrefix,
  MAX_POLL_PAGES,
  sameProject,
  type TrackerAdapter,
} from "../adapter.ts";
import { HttpApiError } from "../../http/api_error.ts";
import type { RateLimit } from "../../http/rate_limit.ts";
import { graphql } from "./graphql.ts";
import { linearMove } from "./move.ts";
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
  moveTicket: linearMove,
};
