/** The decision core's settings, tasks and state as the core's table tests build them. */
import { type CoreSettings, type CoreState, initialState, type TaskView } from "./state.ts";

/** Settings of a one-role run on claude; `over` changes what a test is about. */
export function coreSettings(over: Partial<CoreSettings> = {}): CoreSettings {
  return {
    maxAgents: 4,
    roleMaxAgents: {},
    maxAttempts: 3,
    requireApproval: false,
    continuous: false,
    reportedExitGraceMs: 10_000,
    mergeRetryMs: 3000,
    maxRebases: 3,
    landUnreported: false,
    adapter: "claude",
    chains: { backend: ["claude"] },
    ...over,
  };
}

/** An OPEN backend task named `id` (its seq from the digits of the id). */
export function taskView(id: string, over: Partial<TaskView> = {}): TaskView {
  return {
    id,
    status: "OPEN",
    title: id,
    role: "backend",
    priority: 2,
    seq: Number(id.replace(/\D/g, "")) || 0,
    owned_files: [],
    depends_on: [],
    attempts: 0,
    summary: null,
    ...over,
  };
}

/** The state of a run of `tasks` at time 1 000 ms under `settings`. */
export function coreState(
  settings: CoreSettings,
  tasks: TaskView[],
  over: Partial<CoreState> = {},
): CoreState {
  return { ...initialState(settings, 1_000), tasks: new Map(tasks.map((t) => [t.id, t])), ...over };
}
