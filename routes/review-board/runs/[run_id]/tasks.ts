/** GET /review-board/runs/<run_id>/tasks — every task of the run and why it waits or stopped. */
import type { Ctx } from "../../../../lib/http/context.ts";
import { runOutline } from "../../../../lib/review/activity.ts";
import { routePolicy } from "../../../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** The run outline (planned and blocked tasks too); never changes the projection. */
export async function GET(c: Ctx): Promise<Response> {
  c.header("Cache-Control", "no-store");
  return c.json(await runOutline(c.get("app").paths, c.req.param("run_id")!));
}
