/** POST /tasks/<id>/reopen — operator requeue of an ORPHANED task (409 otherwise). */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { requireOperator } from "../../../lib/tasks/operator.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Requeue one task. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  await readOptionalJsonObject(c);
  requireOperator(c, "reopen a task");
  const store = await taskStoreFor(c.get("app"));
  return c.json(await store.reopen(id));
}
