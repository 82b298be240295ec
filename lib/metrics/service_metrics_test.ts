/** The service's metric families: zeros without a run, the run's gauges with one. */
import assert from "node:assert/strict";
import { formatPrometheus } from "./prometheus.ts";
import { serviceMetricFamilies } from "./service_metrics.ts";

function samples(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const i = line.lastIndexOf(" ");
    out[line.slice(0, i)] = Number(line.slice(i + 1));
  }
  return out;
}

const NO_WORKERS = { connected: 0, draining: 0, slotsFree: 0 };

Deno.test("serviceMetricFamilies() without a run: every family, every configured role, all zero", () => {
  const got = samples(formatPrometheus(serviceMetricFamilies({
    roles: ["docs", "backend"],
    workers: NO_WORKERS,
    leasesLost: 0,
  })));
  assert.deepEqual(got, {
    "service_run_live": 0,
    'service_tasks_ready{role="backend"}': 0,
    'service_tasks_ready{role="docs"}': 0,
    "service_tasks_ready_all": 0,
    'service_tasks_running{where="local"}': 0,
    'service_tasks_running{where="remote"}': 0,
    "service_workers": 0,
    "service_workers_draining": 0,
    "service_worker_slots_free": 0,
    "service_landing_queue": 0,
    "service_leases_lost_total": 0,
  });
});

Deno.test("serviceMetricFamilies() with a live run: its gauges, workers and lost leases", () => {
  const text = formatPrometheus(serviceMetricFamilies({
    run: {
      runId: "r1",
      roles: ["backend", "docs"],
      ready: { backend: 2, docs: 0, ml: 1 },
      running: { local: 1, remote: 3 },
      landingQueue: 4,
      parked: { claude: 120, codex: 0 },
    },
    roles: ["ignored-while-a-run-is-live"],
    workers: { connected: 3, draining: 1, slotsFree: 5 },
    leasesLost: 7,
  }));
  const got = samples(text);
  assert.equal(got.service_run_live, 1);
  assert.equal(got['service_tasks_ready{role="backend"}'], 2);
  assert.equal(got['service_tasks_ready{role="ml"}'], 1, "a role with ready tasks is shown");
  assert.equal(got['service_tasks_ready{role="ignored-while-a-run-is-live"}'], undefined);
  assert.equal(got.service_tasks_ready_all, 3);
  assert.equal(got['service_tasks_running{where="remote"}'], 3);
  assert.equal(got.service_workers, 3);
  assert.equal(got.service_workers_draining, 1);
  assert.equal(got.service_worker_slots_free, 5);
  assert.equal(got.service_landing_queue, 4);
  assert.equal(got.service_leases_lost_total, 7);
  assert.equal(got['service_adapter_parked{adapter="claude"}'], 1);
  assert.equal(got['service_adapter_parked{adapter="codex"}'], 0);
  assert.equal(got['service_adapter_parked_seconds{adapter="claude"}'], 120);
  assert.match(text, /# TYPE service_leases_lost_total counter\n/);
});
