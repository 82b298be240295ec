/** POST /workers/<name>/uncordon — an operator lifts the worker's cordon (and drain): it gets tasks again. */
import type { Ctx } from "../../../lib/http/context.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { answerWorkerAction } from "../../../lib/workers/operator_route.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Uncordon the worker; its new state. */
export async function POST(c: Ctx): Promise<Response> {
  return await answerWorkerAction(c, "uncordon");
}
