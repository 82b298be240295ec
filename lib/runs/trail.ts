/**
 * What a run's journal says of how its tasks ended, beside the board (which keeps FAILED and
 * CANCELLED cards in `gated`, spec §3.2, and must not change): a journal sink that reads the
 * detail rows the fold ignores (`task_failed`, `task_cancelled`) with the rows that move a task
 * on, and the one policy of a run's status now — recomputed when an operator cancelled or
 * retried its tasks after it ended, so a run whose only failed task was cancelled is
 * `completed`, and one whose failed task was retried can be resumed.
 */
import type { RowSink } from "../journal/incremental.ts";
import type { JournalEvent } from "../journal/row.ts";
import type { DataNeed } from "../journal/bulk_verify.ts";
import { type EventType, readEvent } from "../journal/event_reader.ts";
import type { JournalDamage, RunStatus } from "./summary_types.ts";

/** How a task of the run stands: still to finish, landed, or ended without landing. */
export type TaskEnd = "open" | "landed" | "failed" | "cancelled";

/** The sink's state: each task's end, the plan's dependencies, and the run's last word. */
export interface RunTrail {
  tasks: Map<string, TaskEnd>;
  /** `depends_on` of each planned task (from `run_started.planned`). */
  dependsOn: Map<string, string[]>;
  /** `status` of the last `run_completed`, or null before one. */
  ended: string | null;
  /** A `run_resumed` came after the last `run_completed`: a later process took the run over. */
  resumedSinceEnd: boolean;
  /** A task moved (retried, cancelled, failed, landed…) after the last `run_completed`. */
  changedSinceEnd: boolean;
}

/** Rows that set a task's end. */
const TASK_END: Partial<Record<EventType, TaskEnd>> = {
  task_claimed: "open",
  task_retried: "open",
  task_completed: "open",
  task_merged: "landed",
  task_failed: "failed",
  task_cancelled: "cancelled",
};

function apply(state: RunTrail, row: JournalEvent): void {
  const event = readEvent(row);
  if (!event) return;
  switch (event.type) {
    case "run_started":
      for (const p of event.planned) {
        if (!state.tasks.has(p.task_id)) state.tasks.set(p.task_id, "open");
        state.dependsOn.set(p.task_id, p.depends_on);
      }
      return;
    case "run_completed":
      state.ended = event.status ?? "completed";
      state.resumedSinceEnd = false;
      state.changedSinceEnd = false;
      return;
    case "run_resumed":
      if (state.ended !== null) state.resumedSinceEnd = true;
      return;
    case "task_review_decision":
      if (event.decision === "merge") setEnd(state, event.task_id, "landed");
      return;
  }
  const end = TASK_END[event.type];
  if (end && "task_id" in event) setEnd(state, event.task_id, end);
}

function setEnd(state: RunTrail, taskId: string, end: TaskEnd): void {
  state.tasks.set(taskId, end);
  if (state.ended !== null) state.changedSinceEnd = true;
}

function reads(type: string): DataNeed {
  if (type === "run_started" || type === "run_completed" || type === "task_review_decision") {
    return "data";
  }
  return Object.hasOwn(TASK_END, type) ? "task_id" : "nothing";
}

/** The run trail as an incremental journal sink. */
export const RUN_TRAIL_SINK: RowSink<RunTrail> = {
  init: () => ({
    tasks: new Map(),
    dependsOn: new Map(),
    ended: null,
    resumedSinceEnd: false,
    changedSinceEnd: false,
  }),
  apply,
  clone: (state) => structuredClone(state),
  reads,
};

/** What the runs list shows of a trail. */
export interface RunOutcome {
  /** Tasks whose last word is `task_failed` / `task_cancelled` (their cards sit in gated). */
  failed: number;
  cancelled: number;
  /** Open tasks that can still run: none of their planned dependencies failed. */
  runnable: number;
  ended: string | null;
  resumedSinceEnd: boolean;
  changedSinceEnd: boolean;
  /** Where the journal does not verify (lib/runs/journal_damage.ts); absent when it does. */
  damage?: JournalDamage;
}

/** Count a trail's ends (pure). */
export function outcomeOf(trail: RunTrail): RunOutcome {
  let failed = 0, cancelled = 0, runnable = 0;
  const stuck = (id: string, seen: Set<string>): boolean => {
    if (seen.has(id)) return false;
    seen.add(id);
    return (trail.dependsOn.get(id) ?? []).some((d) =>
      trail.tasks.get(d) === "failed" || stuck(d, seen)
    );
  };
  for (const [id, end] of trail.tasks) {
    if (end === "failed") failed++;
    else if (end === "cancelled") cancelled++;
    else if (end === "open" && !stuck(id, new Set())) runnable++;
  }
  return {
    failed,
    cancelled,
    runnable,
    ended: trail.ended,
    resumedSinceEnd: trail.resumedSinceEnd,
    changedSinceEnd: trail.changedSinceEnd,
  };
}

/**
 * A run's status now (pure): a live process runs it; one whose journal does not verify is
 * `unverified` — nothing can be appended to it, so it cannot be resumed, and what its rows say
 * is not taken as its outcome; one that never ended, or was taken over
 * and not ended again, was interrupted; one whose tasks did not move since it ended is what it
 * said; else it is recomputed from its tasks as the orchestrator decides a run's end — work
 * left that can run makes it `resumable` (`service run` resumes it), otherwise any FAILED task
 * makes it `failed`, and every task landed or cancelled makes it `completed`.
 */
export function runStatusOf(outcome: RunOutcome, live: boolean): RunStatus {
  if (live) return "running";
  if (outcome.damage) return "unverified";
  const ended = outcome.ended;
  if (ended === null || outcome.resumedSinceEnd) return "interrupted";
  if (!outcome.changedSinceEnd) {
    return ended === "completed" || ended === "failed" || ended === "stopped"
      ? ended
      : "interrupted";
  }
  if (outcome.runnable > 0) return ended === "stopped" ? "stopped" : "resumable";
  return outcome.failed > 0 ? "failed" : "completed";
}
