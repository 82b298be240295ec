/**
 * What a server reads of the run its process drives, without the journal: the live run's loop
 * registers a probe while it runs (lib/orchestrator/orchestrator.ts) — its gauges, computed from
 * the loop's state in memory, and when it last decided a tick — and `service run` says a run is
 * starting from the moment its server listens until the loop opens (so `/readyz` does not say
 * ready while the journal is not open yet). One run per workspace at a time, as `service run`
 * allows.
 */

/** A live run's gauges (DESIGN.md §17), from the loop's state. */
export interface RunGauges {
  runId: string;
  /** The run's roles: each gets a `service_tasks_ready` sample, 0 when none is ready. */
  roles: string[];
  /** Tasks a free slot (a worker's, or one of ours) could start now, by role. */
  ready: Record<string, number>;
  /** Agents running on this machine, and on remote workers. */
  running: { local: number; remote: number };
  /** Finished tasks on their way to the target branch (capture, review, gates, merge). */
  landingQueue: number;
  /** The run's adapters, each with the seconds until it may start agents again (0: not parked). */
  parked: Record<string, number>;
}

/** What the live run's loop lets the server see. */
export interface RunProbe {
  gauges(): RunGauges;
  /** When the loop last decided a tick (ms since the epoch). */
  lastTick(): number;
  /** How often a tick is due (ms). */
  tickMs: number;
}

const probes = new Map<string, RunProbe>();
const starting = new Map<string, number>();

/** The live run of `root` shows itself through `probe`; the returned function withdraws it. */
export function openRunProbe(root: string, probe: RunProbe): () => void {
  probes.set(root, probe);
  return () => {
    if (probes.get(root) === probe) probes.delete(root);
  };
}

/** The live run's probe of `root`, if a run's loop runs. */
export function runProbeFor(root: string): RunProbe | undefined {
  return probes.get(root);
}

/** A run of `root` is starting (its server listens, its loop is not open yet); call to clear. */
export function markRunStarting(root: string): () => void {
  starting.set(root, (starting.get(root) ?? 0) + 1);
  let cleared = false;
  return () => {
    if (cleared) return;
    cleared = true;
    const n = (starting.get(root) ?? 1) - 1;
    if (n <= 0) starting.delete(root);
    else starting.set(root, n);
  };
}

/** True while a run of `root` is starting. */
export function runStarting(root: string): boolean {
  return starting.has(root);
}
