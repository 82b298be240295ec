/**
 * tracker_a's ticket moves through the issue's workflow: read its status
 * (`GET /rest/api/3/issue/{key}?fields=status`), list the transitions open to it now
 * (`GET /rest/api/3/issue/{key}/transitions`), take the one whose `to.name` is the configured
 * state and `POST /rest/api/3/issue/{key}/transitions` with its id. A state no transition reaches
 * from where the issue is fails naming the states that are reachable.
 */
import { type ApiAccess, apiClient } from "../adapter.ts";
import { arr, obj, str } from "../../util/json_fields.ts";
import {
  decideMove,
  findState,
  type MoveResult,
  type TicketMove,
  UnknownStateError,
} from "../move.ts";
import type { TicketRef } from "../ticket.ts";

/** Move issue `ids.key` (see the header). */
export async function jiraMove(
  access: ApiAccess,
  o: { ids: TicketRef; move: TicketMove; headers: HeadersInit; site: string },
): Promise<MoveResult> {
  const http = apiClient(access, "Jira");
  const key = String(o.ids.key);
  const issueUrl = `${o.site}/rest/api/3/issue/${encodeURIComponent(key)}`;
  const issue = obj(
    (await http.request(`${issueUrl}?fields=status`, { headers: o.headers })).json(),
  );
  const status = obj(obj(issue.fields).status);
  const current = str(status.name);
  const decision = decideMove({
    event: o.move.event,
    current,
    currentDone: str(obj(status.statusCategory).key) === "done",
    target: o.move.to,
  });
  if (decision.act === "already") return { outcome: "already", state: current };
  if (decision.act === "left") return { outcome: "left", state: current };
  const listed = obj(
    (await http.request(`${issueUrl}/transitions`, { headers: o.headers })).json(),
  );
  const transitions = arr(listed.transitions).map((t) => {
    const to = obj(obj(t).to);
    return { id: str(obj(t).id), name: str(to.name) };
  }).filter((t) => t.id !== "" && t.name !== "");
  const transition = findState(transitions, o.move.to);
  if (!transition) {
    throw new UnknownStateError({
      product: "Jira",
      ref: key,
      wanted: o.move.to,
      available: transitions.map((t) => t.name),
      from: current,
    });
  }
  await http.request(`${issueUrl}/transitions`, {
    method: "POST",
    headers: o.headers,
    json: { transition: { id: transition.id } },
  });
  return { outcome: "moved", state: transition.name };
}
