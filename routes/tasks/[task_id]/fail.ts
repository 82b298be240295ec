/** POST /tasks/<id>/fail — body `{"reason"}` optional; from CLAIMED or IN_PROGRESS. */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody, ReasonBodySchema } from "../../../lib/tasks/http_input.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Fail one task. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(ReasonBodySchema, await readOptionalJsonObject(c));
  const store = await taskStoreFor(c.get("app"));
  return c.json(await store.fail(id, body.reason ?? body.summary, body.session_id));
}
