/** POST /workers/<name>/cordon — an operator cordons the worker: it gets no task until uncordoned (its running agents go on). */
import type { Ctx } from "../../../lib/http/context.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { answerWorkerAction } from "../../../lib/workers/operator_route.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Cordon the worker; its new state. */
export async function POST(c: Ctx): Promise<Response> {
  return await answerWorkerAction(c, "cordon");
}
