/** GET /tasks/<id>. */
import type { Ctx } from "../../lib/http/context.ts";
import { requireId } from "../../lib/ids.ts";
import { taskStoreFor } from "../../lib/tasks/registry.ts";
import { routePolicy } from "../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** One task, 404 when unknown. */
export async function GET(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const store = await taskStoreFor(c.get("app"));
  return c.json(store.require(id));
}
