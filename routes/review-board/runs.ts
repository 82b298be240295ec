/** GET /review-board/runs — every run, newest first. */
import type { Ctx } from "../../lib/http/context.ts";
import { listRuns } from "../../lib/runs/runs.ts";
import { routePolicy } from "../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** List runs with their head and envelope. */
export async function GET(c: Ctx): Promise<Response> {
  return c.json({ runs: await listRuns(c.get("app").paths) });
}
