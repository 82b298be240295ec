/** POST /tasks/next?role=R — claim the ready task with the lowest priority number; 204 if none. */
import type { Ctx } from "../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../lib/http/body.ts";
import { ClaimBodySchema, parseBody } from "../../lib/tasks/http_input.ts";
import { taskStoreFor } from "../../lib/tasks/registry.ts";
import { routePolicy } from "../../lib/http/route_policy.ts";
import { callerIsWorker, workerMayTouch } from "../../lib/workers/task_api_guard.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Claim the next task of a role (any role without `role`). */
export async function POST(c: Ctx): Promise<Response> {
  const body = parseBody(ClaimBodySchema, await readOptionalJsonObject(c));
  const store = await taskStoreFor(c.get("app"));
  // A worker token takes from the shared backlog only: a run's tasks go through its desk.
  const claimed = await store.claimNextOf({
    role: c.req.query("role") || undefined,
    sessionId: body.session_id,
    ...(callerIsWorker(c) ? { skip: (t) => !workerMayTouch(t) } : {}),
  });
  if (!claimed) return c.body(null, 204);
  return c.json(claimed);
}
