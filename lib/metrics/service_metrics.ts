/**
 * The service's metric families (DESIGN.md §17), from facts already in memory (pure): the live
 * run's gauges (none: no run, every run gauge 0), the workers the server has heard of, the leases
 * lost. Every family is always present, and every role and adapter the run (or service.yaml) knows
 * gets a sample, 0 when nothing is there: a scaler asking for `service_tasks_ready{role="x"}`
 * finds 0, never "no such metric".
 */
import type { MetricFamily } from "./prometheus.ts";
import type { RunGauges } from "./run_probe.ts";

/** What the metrics are made of. */
export interface MetricsFacts {
  /** The live run's gauges; undefined when no run is live. */
  run?: RunGauges;
  /** The roles service.yaml names (used while no run is live). */
  roles: readonly string[];
  /** Workers heard of within a lease: how many, how many drain, their free slots. */
  workers: { connected: number; draining: number; slotsFree: number };
  /** Remote sessions whose lease ran out since the server started. */
  leasesLost: number;
}

/** The families `/metrics` serves, in a fixed order. */
export function serviceMetricFamilies(f: MetricsFacts): MetricFamily[] {
  const run = f.run;
  const roles = [...new Set([...(run?.roles ?? f.roles), ...Object.keys(run?.ready ?? {})])].sort();
  const ready = (role: string) => run?.ready[role] ?? 0;
  const parked = Object.entries(run?.parked ?? {}).sort(([a], [b]) => a.localeCompare(b));
  return [
    {
      name: "service_run_live",
      help: "1 while a run's loop is live in this process (`service run`), else 0.",
      type: "gauge",
      samples: [{ value: run ? 1 : 0 }],
    },
    {
      name: "service_tasks_ready",
      help: "Tasks that a free slot could start now (dependencies merged, owned files free), " +
        "by role.",
      type: "gauge",
      samples: roles.map((role) => ({ labels: { role }, value: ready(role) })),
    },
    {
      name: "service_tasks_ready_all",
      help: "Tasks that a free slot could start now, every role together.",
      type: "gauge",
      samples: [{ value: roles.reduce((n, r) => n + ready(r), 0) }],
    },
    {
      name: "service_tasks_running",
      help: "Agents running: on this machine (local) and on remote workers (remote).",
      type: "gauge",
      samples: [
        { labels: { where: "local" }, value: run?.running.local ?? 0 },
        { labels: { where: "remote" }, value: run?.running.remote ?? 0 },
      ],
    },
    {
      name: "service_workers",
      help: "Remote workers heard of within the lease (heartbeat_timeout_s).",
      type: "gauge",
      samples: [{ value: f.workers.connected }],
    },
    {
      name: "service_workers_draining",
      help: "Of service_workers, those stopping (SIGTERM): they claim nothing more.",
      type: "gauge",
      samples: [{ value: f.workers.draining }],
    },
    {
      name: "service_worker_slots_free",
      help: "Free slots of the connected workers that are not draining.",
      type: "gauge",
      samples: [{ value: f.workers.slotsFree }],
    },
    {
      name: "service_landing_queue",
      help: "Finished tasks on their way to the target branch (capture, review, gates, merge).",
      type: "gauge",
      samples: [{ value: run?.landingQueue ?? 0 }],
    },
    {
      name: "service_leases_lost_total",
      help: "Remote sessions whose worker stopped heartbeating, since the server started.",
      type: "counter",
      samples: [{ value: f.leasesLost }],
    },
    {
      name: "service_adapter_parked",
      help: "1 while the adapter is parked by a rate or usage limit (no agent of it starts).",
      type: "gauge",
      samples: parked.map(([adapter, s]) => ({ labels: { adapter }, value: s > 0 ? 1 : 0 })),
    },
    {
      name: "service_adapter_parked_seconds",
      help: "Seconds until the parked adapter may start agents again (0: not parked).",
      type: "gauge",
      samples: parked.map(([adapter, s]) => ({ labels: { adapter }, value: Math.max(0, s) })),
    },
  ];
}
