/**
 * GET /readyz — readiness (DESIGN.md §17): 200 `ready` once the server serves and, under
 * `service run`, the run's journal is open and its loop runs; 503 `starting` before, `stopping`
 * while it shuts down. Public and cheap: a word, read from memory.
 */
import type { Ctx } from "../lib/http/context.ts";
import { routePolicy } from "../lib/http/route_policy.ts";
import { readiness } from "../lib/metrics/health.ts";
import { healthFacts } from "../lib/metrics/collect.ts";

/** What this URL requires: nothing (it says one word). */
export const policy = routePolicy({ GET: "public" }, { anyOrigin: true });

/** Ready, starting or stopping. */
export function GET(c: Ctx): Response {
  const answer = readiness(healthFacts(c.get("app")));
  return c.body(answer.word + "\n", answer.ok ? 200 : 503, {
    "Content-Type": "text/plain; charset=utf-8",
    "Cache-Control": "no-store",
  });
}
