/** GET /status and /status/ — one JSON object describing the service now. */
import type { Ctx } from "../lib/http/context.ts";
import { collectStatus } from "../lib/status/status.ts";
import { routePolicy } from "../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" }, { trailingSlash: true });

/** Answer the status object. */
export async function GET(c: Ctx): Promise<Response> {
  c.header("Cache-Control", "no-store");
  return c.json(await collectStatus(c.get("app")));
}
