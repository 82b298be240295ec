/** POST /tasks/<id>/heartbeat — the claimant is alive; the first one marks IN_PROGRESS. */
import type { Ctx } from "../../../lib/http/context.ts";
import { requireId } from "../../../lib/ids.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { agentSession } from "../../../lib/tasks/agent_guard.ts";

/** Who may call it: the agent of this task (its own session only), a worker, an operator. */
export const policy = routePolicy({ POST: "agent" });

/** Record a heartbeat. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const store = await taskStoreFor(c.get("app"));
  agentSession(c, store.get(id));
  return c.json(await store.heartbeat(id));
}
