/**
 * GET /metrics — the service's metrics in the Prometheus text format (DESIGN.md §17): what
 * Prometheus scrapes and what KEDA's metrics-api trigger (`format: prometheus`) reads. Computed
 * from memory on each scrape: the live run's state, the workers heard of, the leases lost.
 */
import type { Ctx } from "../lib/http/context.ts";
import { routePolicy } from "../lib/http/route_policy.ts";
import { formatPrometheus, PROMETHEUS_CONTENT_TYPE } from "../lib/metrics/prometheus.ts";
import { serviceMetricFamilies } from "../lib/metrics/service_metrics.ts";
import { metricsFacts } from "../lib/metrics/collect.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** The metrics now. */
export async function GET(c: Ctx): Promise<Response> {
  const text = formatPrometheus(serviceMetricFamilies(await metricsFacts(c.get("app"))));
  return c.body(text, 200, {
    "Content-Type": PROMETHEUS_CONTENT_TYPE,
    "Cache-Control": "no-store",
  });
}
