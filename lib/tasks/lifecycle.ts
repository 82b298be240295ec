/**
 * The task lifecycle (spec §3.1, DESIGN.md §6) as a pure state machine: a status and a trigger
 * give the next status or a refusal. No clocks, files or stores here.
 */

/** Every task status, upper-case as stored and served. */
export const STATUSES = [
  "OPEN",
  "CLAIMED",
  "IN_PROGRESS",
  "DONE",
  "CLOSED",
  "FAILED",
  "BLOCKED",
  "ORPHANED",
  "CANCELLED",
] as const;

/** A task status. */
export type TaskStatus = typeof STATUSES[number];

/** What can happen to a task. */
export const TRIGGERS = [
  "claim", // an agent or worker claims it
  "heartbeat", // the claimant reports progress
  "complete", // the claimant reports completion
  "operator_complete", // an operator marks it done
  "fail", // the claimant reports failure
  "cancel", // an operator cancels it
  "orphan", // the heartbeat monitor finds no live agent
  "reopen", // POST /tasks/<id>/reopen (operator requeue)
  "requeue", // orchestrator auto-recovery chose requeue
  "recover_done", // orchestrator auto-recovery merged partial work
  "unblock", // every dependency is satisfied
  "merge_succeeded", // the merge step landed the work
  "merge_failed", // the merge step gave up on conflicts
  "retry", // gates failed or an operator requested changes: a new attempt
  "give_up", // recovery found nothing mergeable and the attempts are spent
  "operator_retry", // `service retry`: a FAILED or CANCELLED task gets new attempts
  "reblock", // a dependency no longer satisfies it (its work went back or failed to land)
  "journal_merged", // start-up repair: the run journal says its work landed (`task_merged`)
] as const;

/** A trigger of a transition. */
export type TaskTrigger = typeof TRIGGERS[number];

/** Statuses that satisfy a dependency (DESIGN.md §6). */
export const SATISFIES_DEPENDENCY: ReadonlySet<TaskStatus> = new Set([
  "DONE",
  "CLOSED",
  "CANCELLED",
]);

/** Statuses held by a live claimant, watched by the heartbeat monitor. */
export const ACTIVE: ReadonlySet<TaskStatus> = new Set(["CLAIMED", "IN_PROGRESS"]);

const NON_TERMINAL: TaskStatus[] = ["OPEN", "BLOCKED", "CLAIMED", "IN_PROGRESS", "ORPHANED"];

/** The allowed transitions: trigger -> from-status -> to-status. */
const TRANSITIONS: Readonly<Record<TaskTrigger, Partial<Record<TaskStatus, TaskStatus>>>> = {
  claim: { OPEN: "CLAIMED" },
  heartbeat: { CLAIMED: "IN_PROGRESS", IN_PROGRESS: "IN_PROGRESS" },
  complete: { CLAIMED: "DONE", IN_PROGRESS: "DONE" },
  operator_complete: Object.fromEntries(NON_TERMINAL.map((s) => [s, "DONE"])),
  fail: { CLAIMED: "FAILED", IN_PROGRESS: "FAILED" },
  // DONE work that has not landed may be cancelled too (it is discarded, kept on a rescue ref);
  // so may a FAILED task: that is how an operator unblocks its dependents (spec §3.1).
  cancel: Object.fromEntries([...NON_TERMINAL, "DONE", "FAILED"].map((s) => [s, "CANCELLED"])),
  orphan: { CLAIMED: "ORPHANED", IN_PROGRESS: "ORPHANED" },
  reopen: { ORPHANED: "OPEN" },
  requeue: { ORPHANED: "OPEN" },
  recover_done: { ORPHANED: "DONE" },
  unblock: { BLOCKED: "OPEN" },
  merge_succeeded: { DONE: "CLOSED" },
  merge_failed: { DONE: "FAILED" },
  retry: { DONE: "OPEN" },
  give_up: { ORPHANED: "FAILED" },
  operator_retry: { FAILED: "OPEN", CANCELLED: "OPEN" },
  reblock: { OPEN: "BLOCKED" },
  // The journal is written before the store: landed work is CLOSED whatever the store says.
  journal_merged: Object.fromEntries(
    STATUSES.filter((s) => s !== "CLOSED").map((s) => [s, "CLOSED"]),
  ),
};

/** Statuses a cancel moves to CANCELLED: every one but CLOSED (landed) and CANCELLED. */
export const CANCELLABLE: ReadonlySet<TaskStatus> = new Set(
  Object.keys(TRANSITIONS.cancel) as TaskStatus[],
);

/** Statuses whose work has not started: a tracker's edit of its ticket revises them. */
export const NOT_STARTED: ReadonlySet<TaskStatus> = new Set(["OPEN", "BLOCKED"]);

/** Outcome of {@link transition}. */
export type TransitionResult =
  | { ok: true; to: TaskStatus }
  | { ok: false; reason: string };

/** The status after `trigger` fires on a task in `from`, or why it cannot. */
export function transition(from: TaskStatus, trigger: TaskTrigger): TransitionResult {
  const to = TRANSITIONS[trigger][from];
  if (to) return { ok: true, to };
  const allowed = Object.keys(TRANSITIONS[trigger]).join(", ");
  return {
    ok: false,
    reason: `cannot ${trigger.replaceAll("_", " ")} a ${from} task (allowed from: ${allowed})`,
  };
}

/** Parse a lower-case status query value (`open`, `in_progress` …); undefined when unknown. */
export function parseStatusQuery(value: string): TaskStatus | undefined {
  const upper = value.toUpperCase();
  return (STATUSES as readonly string[]).includes(upper) ? upper as TaskStatus : undefined;
}
