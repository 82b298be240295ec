/**
 * The live run's gauges for `/metrics` (DESIGN.md §17), read from the decision core's state
 * (pure, no journal): the tasks a free slot could start now by role (the one scheduling policy
 * asked with unbounded slots, so a task waiting for a dependency's merge or another's owned files
 * is not ready), the agents running here and on workers, the landing queue, the parked adapters.
 */
import type { RunGauges } from "../../metrics/run_probe.ts";
import { workerSchedule } from "./on_worker.ts";
import type { CoreState } from "./state.ts";

/** The gauges of `state` for run `runId` with `roles` (each gets a sample). */
export function runGauges(state: CoreState, runId: string, roles: readonly string[]): RunGauges {
  const ready: Record<string, number> = Object.fromEntries(roles.map((r) => [r, 0]));
  const decision = workerSchedule(state, Number.MAX_SAFE_INTEGER);
  for (const id of decision.start) {
    const role = state.tasks.get(id)?.role;
    if (role !== undefined) ready[role] = (ready[role] ?? 0) + 1;
  }
  let local = 0;
  let remote = 0;
  for (const s of state.sessions.values()) {
    if (s.worker !== undefined) remote++;
    else if (s.batchId === undefined) local++;
  }
  const adapters = new Set([
    state.settings.adapter,
    ...Object.values(state.settings.chains).flat(),
  ]);
  const parked: Record<string, number> = {};
  for (const a of [...adapters, ...Object.keys(state.parked)]) {
    parked[a] = Math.max(0, Math.ceil(state.parked[a] ?? 0));
  }
  return {
    runId,
    roles: [...new Set([...roles, ...Object.keys(ready)])].sort(),
    ready,
    running: { local, remote },
    landingQueue: state.landings.size,
    parked,
  };
}
