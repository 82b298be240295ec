/** POST /tasks/<id>/claim — body `{"session_id"}` optional; 409 unless the task is OPEN. */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { ClaimBodySchema, parseBody } from "../../../lib/tasks/http_input.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { refuseRunTaskToWorker } from "../../../lib/workers/task_api_guard.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Claim one task. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(ClaimBodySchema, await readOptionalJsonObject(c));
  const store = await taskStoreFor(c.get("app"));
  refuseRunTaskToWorker(c, store.get(id), "claim");
  return c.json(await store.claim(id, body.session_id));
}
