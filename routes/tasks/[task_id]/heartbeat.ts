/** POST /tasks/<id>/heartbeat — the claimant is alive; the first one marks IN_PROGRESS. */
import type { Ctx } from "../../../lib/http/context.ts";
import { requireId } from "../../../lib/ids.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";

/** Record a heartbeat. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const store = await taskStoreFor(c.get("app"));
  return c.json(await store.heartbeat(id));
}
