/** GET /tasks/<id>. */
import type { Ctx } from "../../lib/http/context.ts";
import { requireId } from "../../lib/ids.ts";
import { taskStoreFor } from "../../lib/tasks/registry.ts";

/** One task, 404 when unknown. */
export async function GET(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const store = await taskStoreFor(c.get("app"));
  return c.json(store.require(id));
}
