/**
 * tracker_e's ticket moves: read the work item (`GET …/issues/{id}/`, its `state` a uuid) and
 * the project's states (`GET …/states/`), then `PATCH …/issues/{id}/` with the uuid of the state
 * of the configured name. Its group (`completed`, `cancelled`) says whether the item is done.
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
import { PLANE_CLOSED_GROUPS } from "./webhook.ts";

/** Move work item `ids.id` of the project at `projectUrl` (see the header). */
export async function planeMove(
  access: ApiAccess,
  o: { ids: TicketRef; move: TicketMove; headers: HeadersInit; projectUrl: string },
): Promise<MoveResult> {
  const http = apiClient(access, "Plane");
  const id = String(o.ids.id);
  const itemUrl = `${o.projectUrl}/issues/${encodeURIComponent(id)}/`;
  const item = obj((await http.request(itemUrl, { headers: o.headers })).json());
  const listed = (await http.request(`${o.projectUrl}/states/`, { headers: o.headers })).json();
  // The states list is paginated (`results`) on Plane Cloud, a bare array on older releases.
  const states = (Array.isArray(listed) ? listed : arr(obj(listed).results)).map((s) => ({
    id: str(obj(s).id),
    name: str(obj(s).name),
    group: str(obj(s).group),
  })).filter((s) => s.id !== "" && s.name !== "");
  const stateId = typeof item.state === "string" ? item.state : str(obj(item.state).id);
  const current = states.find((s) => s.id === stateId);
  const ref = str(item.sequence_id) ? `work item ${str(item.sequence_id)}` : id;
  const decision = decideMove({
    event: o.move.event,
    current: current?.name ?? "",
    currentDone: PLANE_CLOSED_GROUPS.has(current?.group ?? ""),
    target: o.move.to,
  });
  if (decision.act === "already") return { outcome: "already", state: current!.name };
  if (decision.act === "left") return { outcome: "left", state: current!.name };
  const target = findState(states, o.move.to);
  if (!target) {
    throw new UnknownStateError({
      product: "Plane",
      ref,
      wanted: o.move.to,
      available: states.map((s) => s.name),
    });
  }
  await http.request(itemUrl, { method: "PATCH", headers: o.headers, json: { state: target.id } });
  return { outcome: "moved", state: target.name };
}
