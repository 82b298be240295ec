/** POST /tasks/<id>/retry — operator only; a FAILED or CANCELLED task gets new attempts. */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody, ReasonBodySchema } from "../../../lib/tasks/http_input.ts";
import { requireOperator } from "../../../lib/tasks/operator.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Retry one task: OPEN again (BLOCKED while a dependency is unsatisfied), attempts reset. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(ReasonBodySchema, await readOptionalJsonObject(c));
  requireOperator(c, "retry a task");
  const store = await taskStoreFor(c.get("app"));
  return c.json(await store.retry(id, body.reason ?? body.summary));
}
