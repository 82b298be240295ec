/**
 * GET /healthz — liveness (DESIGN.md §17): 200 `ok` while the server's background tick and the
 * live run's loop keep ticking, 503 `stuck` when one has not for a minute. Public and cheap: a
 * word, read from memory.
 */
import type { Ctx } from "../lib/http/context.ts";
import { routePolicy } from "../lib/http/route_policy.ts";
import { liveness } from "../lib/metrics/health.ts";
import { healthFacts } from "../lib/metrics/collect.ts";

/** What this URL requires: nothing (it says one word). */
export const policy = routePolicy({ GET: "public" }, { anyOrigin: true });

/** Alive or stuck. */
export function GET(c: Ctx): Response {
  const answer = liveness(healthFacts(c.get("app")));
  return c.body(answer.word + "\n", answer.ok ? 200 : 503, {
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": "no-store",
  });
}
