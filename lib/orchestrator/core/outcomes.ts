/**
 * The outcomes every handler of the core shares, each written once: an attempt failed (the card
 * goes to gated with the reason as its receipt, then a new attempt or FAILED per the one policy),
 * finished work starts landing, an operator's cancel is recorded.
 */
import * as ev from "../../journal/events.ts";
import type { FailedSignal } from "../../journal/events.ts";
import type { JournalEvent } from "../../journal/row.ts";
import type { Action, PreparedView } from "./protocol.ts";
import { afterFailure } from "./policy.ts";
import type { Draft, TaskView, Unreported } from "./state.ts";

/** Collects a decision's actions. */
export class Out {
  readonly actions: Action[] = [];

  /** Append a journal row. */
  journal(event: JournalEvent): void {
    this.actions.push({ kind: "journal", event });
  }

  /** A line for the progress display. */
  log(taskId: string | null, line: string): void {
    this.actions.push({ kind: "log", line: taskId ? `${taskId}: ${line}` : line });
  }

  /** Any other action. */
  push(action: Action): void {
    this.actions.push(action);
  }
}

/** An attempt's claim as the journal records it. */
export interface Claim {
  taskId: string;
  sessionId: string;
  attempt: number;
  model?: string;
  batchEligible?: boolean;
  /** The adapter that runs it (a fallback adapter while the configured one is parked). */
  adapter?: string;
  /** `batch` for a request in the batch lane. */
  lane?: "batch";
  /** What its worktree environment gave it (DESIGN.md §13). */
  prepared?: PreparedView;
  /** The remote worker that runs it. */
  worker?: string;
  /** Where its agent runs: `worktree` or `container:<runtime>:<image id>` (DESIGN.md §14). */
  isolation?: string;
}

/**
 * An attempt claimed its task: `task_claimed` (the card goes to running), then
 * `task_worktree_prepared` when its worktree environment gave it anything.
 */
export function recordClaim(d: Draft, out: Out, claim: Claim): void {
  const task = d.tasks.get(claim.taskId);
  d.attemptOf.set(claim.taskId, claim.attempt);
  out.journal(ev.taskClaimed({
    task_id: claim.taskId,
    session_id: claim.sessionId,
    title: task?.title,
    role: task?.role,
    attempt: claim.attempt,
    model: claim.model,
    batch_eligible: claim.batchEligible,
    adapter: claim.adapter,
    lane: claim.lane,
    worker: claim.worker,
    isolation: claim.isolation,
  }));
  const p = claim.prepared;
  if (!p) return;
  out.journal(ev.taskWorktreePrepared({
    task_id: claim.taskId,
    session_id: claim.sessionId,
    ...p,
  }));
  const what = [
    p.copied.length ? `copied ${p.copied_total ?? p.copied.length} file(s)` : "",
    p.linked.length ? `linked ${p.linked.join(", ")}` : "",
    p.setup.length ? setupWords(p.setup) : "",
    p.ports.length ? `PORT ${p.ports[0]}` : "",
  ].filter((x) => x !== "");
  if (what.length > 0) out.log(claim.taskId, `worktree ${claim.sessionId}: ${what.join("; ")}`);
}

/** How the setup went, in a few words: how long, and which command failed. */
function setupWords(setup: PreparedView["setup"]): string {
  const s = (setup.reduce((n, r) => n + r.ms, 0) / 1000).toFixed(1);
  const failed = setup.findIndex((r) => r.exit_code !== 0);
  return failed === -1
    ? `setup ${setup.length} command(s) in ${s} s`
    : `setup failed at command ${failed + 1} (exit ${setup[failed].exit_code}) after ${s} s`;
}

/** An attempt that started: an agent, or a request in the batch lane. */
export interface Started extends Omit<Claim, "lane"> {
  startedAt: number;
  deadline: number;
  adapter: string;
  /** A batch request's batch. */
  batchId?: string;
}

/** An attempt started: it is the task's live session, and its claim is journaled. */
export function recordStart(d: Draft, out: Out, e: Started): void {
  d.starting.delete(e.taskId);
  d.batching.delete(e.taskId);
  d.dispatching.delete(e.taskId);
  d.launching.delete(e.taskId);
  d.sessions.set(e.taskId, {
    taskId: e.taskId,
    sessionId: e.sessionId,
    startedAt: e.startedAt,
    deadline: e.deadline,
    adapter: e.adapter,
    ...(e.batchId === undefined ? {} : { batchId: e.batchId }),
    ...(e.worker === undefined ? {} : { worker: e.worker }),
  });
  recordClaim(d, out, { ...e, lane: e.batchId === undefined ? undefined : "batch" });
}

/** A failed attempt, as the card's receipt shows it and the next attempt's prompt explains it. */
export interface AttemptFailure {
  /** The failed checks or the failure, each `{kind, detail}`. */
  signals: FailedSignal[];
  /** One line saying what went wrong. */
  reason: string;
  retryable: boolean;
  /** The note for the next attempt's prompt (default: the reason). */
  note?: string;
  /** Files to name when the task fails (merge conflicts). */
  files?: string[];
  /**
   * The session whose kept work a new attempt continues (the attempt was interrupted); null or
   * absent: a new attempt starts afresh from the target branch; `"keep"`: as the task says.
   */
  resumeFrom?: string | null | "keep";
}

/**
 * An attempt of `task` failed. The task must be ORPHANED (its agent ended) or DONE (its work
 * did not land); it goes back to OPEN for a new attempt or to FAILED, per {@link afterFailure}.
 */
export function attemptFailed(d: Draft, out: Out, task: TaskView, f: AttemptFailure): void {
  out.journal(ev.taskVerificationFailed({ task_id: task.id, signals: f.signals }));
  const verdict = afterFailure(
    { attempts: Math.max(1, task.attempts), retryable: f.retryable, reason: f.reason },
    d.settings.maxAttempts,
  );
  if (verdict.action === "retry") {
    const resumeFrom = f.resumeFrom === "keep" ? undefined : f.resumeFrom ?? null;
    out.push({
      kind: "store",
      change: {
        op: "requeue",
        taskId: task.id,
        reason: verdict.reason,
        countAttempt: true,
        resumeFrom,
      },
    });
    out.journal(ev.taskRetried({ task_id: task.id, reason: verdict.reason }));
    d.notes.set(task.id, f.note ?? f.reason);
    out.log(task.id, verdict.reason);
    return;
  }
  const op = task.status === "DONE" ? "merge_failed" : "give_up";
  out.push({ kind: "store", change: { op, taskId: task.id, reason: verdict.reason } });
  out.journal(ev.taskFailed({ task_id: task.id, reason: verdict.reason, files: f.files }));
  d.notes.delete(task.id);
  out.log(task.id, `FAILED: ${verdict.reason}`);
}

/**
 * A DONE task's work starts on its way to the target: capture its diff first. `unreported`
 * says how work its agent never reported came to land.
 */
export function startLanding(d: Draft, out: Out, taskId: string, unreported?: Unreported): void {
  d.landings.set(taskId, {
    taskId,
    stage: "capturing",
    ...(unreported ? { unreported } : {}),
    reason: "capturing the diff",
    lastTry: d.now,
    rebases: 0,
  });
  out.push({ kind: "capture", taskId });
}

/**
 * The rows of a cancel: the card goes to gated with the reason as its receipt. The reason says
 * who when it can (an operator's own words, "ticket … was closed in tracker_b"); without one
 * the cancel came from an operator.
 */
export function cancelRows(task: { id: string; summary: string | null }): JournalEvent[] {
  const reason = task.summary ? `cancelled: ${task.summary}` : "cancelled by an operator";
  return [
    ev.taskVerificationFailed({
      task_id: task.id,
      signals: [{ kind: "cancelled", detail: reason }],
    }),
    ev.taskCancelled({ task_id: task.id, reason }),
  ];
}

/**
 * The rows of an operator's completion of a task nobody worked on: its card goes to gated, as a
 * cancelled one's does, with a receipt that says so (the board has no column for work settled
 * without a merge, and a `task_merged` row would claim a merge that never happened).
 */
export function operatorDoneRows(task: { id: string; summary: string | null }): JournalEvent[] {
  const reason = `marked done by an operator${
    task.summary ? `: ${task.summary}` : ""
  }; nothing was merged`;
  return [
    ev.taskVerificationFailed({
      task_id: task.id,
      signals: [{ kind: "operator_done", detail: reason }],
    }),
    ev.taskDoneByOperator({ task_id: task.id, reason }),
  ];
}

/**
 * The row of a retry from outside the run (`service retry`, a reopened ticket): the card goes back
 * to queued. The store keeps the reason as the summary ("ticket … was reopened in tracker_b").
 */
export function operatorRetryRows(task: { id: string; summary: string | null }): JournalEvent[] {
  return [ev.taskRetried({ task_id: task.id, reason: task.summary ?? "retried by an operator" })];
}

/** Record an operator's cancel. */
export function recordCancel(out: Out, task: TaskView): void {
  const rows = cancelRows(task);
  for (const row of rows) out.journal(row);
  out.log(task.id, String(rows[1].data.reason));
}

/** Record an operator's completion of a task nobody worked on. */
export function recordOperatorDone(out: Out, task: TaskView): void {
  const rows = operatorDoneRows(task);
  for (const row of rows) out.journal(row);
  out.log(task.id, `DONE: ${String(rows[1].data.reason)}`);
}
