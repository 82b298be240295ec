/**
 * The edge of `/metrics`, `/healthz` and `/readyz`: the facts each reads, from memory only — the
 * live run's probe (lib/metrics/run_probe.ts), the worker roster, the task store's roles, the
 * server's last tick. No journal, no file, so a scrape or a probe costs nothing.
 */
import type { AppContext } from "../http/context.ts";
import { openedTaskStore } from "../tasks/registry.ts";
import { rosterFor } from "../workers/roster.ts";
import type { HealthFacts } from "./health.ts";
import type { MetricsFacts } from "./service_metrics.ts";
import { runProbeFor, runStarting } from "./run_probe.ts";

/** What `/metrics` reports of the server of `app` now. */
export async function metricsFacts(app: AppContext): Promise<MetricsFacts> {
  const root = app.paths.root;
  const roster = rosterFor(root);
  const connected = roster.connected();
  const opened = openedTaskStore(app);
  const roles = opened ? [...(await opened).roles ?? []] : [];
  const run = runProbeFor(root)?.gauges();
  return {
    ...(run ? { run } : {}),
    roles,
    workers: {
      connected: connected.length,
      draining: connected.filter((w) => w.draining).length,
      slotsFree: connected.reduce((n, w) => n + (w.draining ? 0 : w.free), 0),
    },
    leasesLost: roster.leasesLost,
  };
}

/** What `/healthz` and `/readyz` look at, for the server of `app` now. */
export function healthFacts(app: AppContext, now = Date.now()): HealthFacts {
  const probe = runProbeFor(app.paths.root);
  return {
    now,
    ...(app.ticked ? { serverTick: app.ticked } : {}),
    ...(probe ? { runTick: { at: probe.lastTick(), everyMs: probe.tickMs } } : {}),
    closing: app.closing?.aborted === true,
    runStarting: runStarting(app.paths.root),
  };
}
