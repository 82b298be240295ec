/** POST /tasks/<id>/fail — body `{"reason"}` optional; from CLAIMED or IN_PROGRESS. */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody, ReasonBodySchema } from "../../../lib/tasks/http_input.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { refuseRunTaskToWorker } from "../../../lib/workers/task_api_guard.ts";
import { agentSession } from "../../../lib/tasks/agent_guard.ts";

/** Who may call it: the agent of this task (its own session only), a worker, an operator. */
export const policy = routePolicy({ POST: "agent" });

/** Fail one task. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(ReasonBodySchema, await readOptionalJsonObject(c));
  const store = await taskStoreFor(c.get("app"));
  refuseRunTaskToWorker(c, store.get(id), "fail");
  const session = agentSession(c, store.get(id), body.session_id);
  return c.json(await store.fail(id, body.reason ?? body.summary, session));
}
