/**
 * POST /tasks/<id>/complete — body optional: `{"summary", "tests_run", "quality_gates_run",
 * "completion_signals_checked"}`; `{"operator": true}` (operator scope) completes any
 * non-terminal task. 409 once DONE or CLOSED.
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { CompleteBodySchema, parseBody } from "../../../lib/tasks/http_input.ts";
import { requireOperator } from "../../../lib/tasks/operator.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";

/**
 * Who may call it: an agent (worker); `{"operator": true}` also needs scope operator, which the
 * handler checks because it depends on the body.
 */
export const policy = routePolicy({ POST: "worker" });

/** Complete one task. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(CompleteBodySchema, await readOptionalJsonObject(c));
  if (body.operator) requireOperator(c, "complete a task as operator");
  const store = await taskStoreFor(c.get("app"));
  return c.json(await store.complete(id, body));
}
