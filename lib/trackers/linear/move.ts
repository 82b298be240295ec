/**
 * tracker_d's ticket moves: one query reads the issue's state and its team's workflow states
 * (`issue(id)` and `workflowStates(filter: {team: {key: {eq: …}}})`), then
 * `issueUpdate(id, input: {stateId})` moves it to the state of the configured name.
 */
import type { ApiAccess } from "../adapter.ts";
import { HttpApiError } from "../../http/api_error.ts";
import { arr, obj, str } from "../../util/json_fields.ts";
import {
  decideMove,
  findState,
  type MoveResult,
  type TicketMove,
  UnknownStateError,
} from "../move.ts";
import type { TicketRef } from "../ticket.ts";
import { graphql } from "./graphql.ts";
import { LINEAR_CLOSED_STATES } from "./webhook.ts";

const STATES_QUERY = `query IssueStates($id: String!, $team: String!) {
  issue(id: $id) { identifier state { id name type } }
  workflowStates(first: 250, filter: { team: { key: { eq: $team } } }) {
    nodes { id name type }
  }
}`;

const UPDATE_MUTATION = `mutation Move($id: String!, $stateId: String!) {
  issueUpdate(id: $id, input: { stateId: $stateId }) { success issue { state { name } } }
}`;

/** Move issue `ids.id` of team `access.project` (see the header). */
export async function linearMove(
  access: ApiAccess,
  ids: TicketRef,
  move: TicketMove,
): Promise<MoveResult> {
  const id = String(ids.id);
  const read = await graphql(access, STATES_QUERY, { id, team: access.project });
  const issue = obj(read.data.issue);
  const state = obj(issue.state);
  const current = str(state.name);
  const decision = decideMove({
    event: move.event,
    current,
    currentDone: LINEAR_CLOSED_STATES.has(str(state.type)),
    target: move.to,
  });
  if (decision.act === "already") return { outcome: "already", state: current };
  if (decision.act === "left") return { outcome: "left", state: current };
  const states = arr(obj(read.data.workflowStates).nodes).map((n) => ({
    id: str(obj(n).id),
    name: str(obj(n).name),
  })).filter((s) => s.id !== "" && s.name !== "");
  const target = findState(states, move.to);
  if (!target) {
    throw new UnknownStateError({
      product: "Linear",
      ref: str(issue.identifier) || id,
      wanted: move.to,
      available: states.map((s) => s.name),
    });
  }
  const answer = await graphql(access, UPDATE_MUTATION, { id, stateId: target.id });
  if (obj(answer.data.issueUpdate).success !== true) {
    throw new HttpApiError("Linear issueUpdate did not succeed", {
      status: 400,
      method: "POST",
      url: access.apiUrl,
      rate: answer.rate,
    });
  }
  return { outcome: "moved", state: target.name };
}
