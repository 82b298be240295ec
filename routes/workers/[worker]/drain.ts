/** POST /workers/<name>/drain — an operator drains the worker: it claims nothing more, and exits once its agents are done (told in its next heartbeat or claim). */
import type { Ctx } from "../../../lib/http/context.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { answerWorkerAction } from "../../../lib/workers/operator_route.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Drain the worker; its new state. */
export async function POST(c: Ctx): Promise<Response> {
  return await answerWorkerAction(c, "drain");
}
