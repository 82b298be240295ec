/**
 * An agent ended (or never started, or was lost with an earlier process): what its task's
 * status says happened, and what follows — landing reported work, recording an agent's own
 * failure or an operator's cancel, or a new attempt per the policy. Work never reported lands
 * only when its agent exited 0 on its own (a CLI that cannot call the task API); the work of an
 * interrupted agent (stopped, killed, timed out, lost with the orchestrator) is kept and the next
 * attempt starts from it — unless `recovery.land_unreported` lands it because every completion
 * signal passes (spec §3.1 ORPHANED → DONE). A stop counts no attempt, nor does a drain (the
 * remote worker running it was stopping: its pushed work is where the next attempt starts).
 */
import * as ev from "../../journal/events.ts";
import type { CoreEvent } from "./protocol.ts";
import { drainedReason } from "./on_worker.ts";
import { attemptFailed, type Out, recordCancel, recordClaim, startLanding } from "./outcomes.ts";
import type { Draft, SessionView, TaskView } from "./state.ts";
import { onStop } from "./on_stop.ts";
import { DISK_FULL, DISK_FULL_SAID } from "../../util/disk_full.ts";

type Exited = Extract<CoreEvent, { type: "agent_exited" }>;

/** What a task whose agent was stopped with the run says until the run resumes. */
const RUN_STOPPED = "run stopped";

/** Why a task's card goes back to queued when the run stops under it. */
const STOPPED_REASON = "the run stopped; `service run` resumes it (its work is kept)";

/** The agent was lost when an earlier orchestrator process stopped or died. */
export const LOST_REASON = "its agent was lost when the orchestrator stopped";

/** `agent_exited`. */
export function onAgentExited(d: Draft, out: Out, e: Exited): void {
  const session = d.sessions.get(e.taskId);
  // A remote session's end that comes after the task moved on to another session (a late
  // report, a lease lost twice) is not the task's current attempt: nothing follows from it.
  if (e.remote && session?.sessionId !== e.sessionId) return;
  d.sessions.delete(e.taskId);
  const task = d.tasks.get(e.taskId);
  const { drained, ...remote } = e.remote ?? { drained: false };
  out.journal(ev.agentExited({
    task_id: e.taskId,
    session_id: e.sessionId,
    exit_code: e.exitCode,
    duration_ms: e.durationMs,
    ended_by: session?.endedBy ?? (drained ? "drain" : undefined),
    ...remote,
  }));
  if (!task) return;
  const stopped = session?.endedBy === "stop" || d.stopping;
  switch (task.status) {
    case "DONE":
      if (e.remote?.push_error !== undefined) {
        // Reported on a worker, but its work never reached the remote: nothing here to land.
        out.push({ kind: "reap", taskId: task.id, reason: e.diagnosis.reason });
        attemptFailed(d, out, task, {
          signals: [{ kind: e.diagnosis.kind, detail: e.diagnosis.reason }],
          reason: e.diagnosis.reason,
          retryable: e.diagnosis.retryable,
          resumeFrom: e.hasWork ? e.sessionId : null, // what it did push is kept
        });
        return;
      }
      if (stopped) {
        // Reported as the run stopped: the next run lands it (its worktree is kept).
        out.push({ kind: "keep", taskId: task.id, reason: "run stopped before landing" });
        return;
      }
      startLanding(d, out, task.id);
      return;
    case "CANCELLED":
      recordCancel(out, task);
      out.push({ kind: "reap", taskId: task.id, reason: "cancelled" });
      return;
    case "FAILED":
      recordAgentFailure(out, task);
      out.push({ kind: "reap", taskId: task.id, reason: "the agent reported failure" });
      return;
    case "CLAIMED":
    case "IN_PROGRESS":
    case "ORPHANED":
      return agentEndedWithoutReport(d, out, task, e, session, stopped);
    default:
      out.push({ kind: "reap", taskId: task.id, reason: `task is ${task.status}` });
  }
}

/** The agent said it failed (`POST /tasks/<id>/fail`): FAILED stands, with its reason. */
export function recordAgentFailure(out: Out, task: TaskView): void {
  const detail = task.summary || "the agent reported failure without a reason";
  out.journal(ev.taskVerificationFailed({
    task_id: task.id,
    signals: [{ kind: "agent_reported_failure", detail }],
  }));
  out.journal(ev.taskFailed({ task_id: task.id, reason: `the agent reported failure: ${detail}` }));
  out.log(
    task.id,
    `FAILED: the agent reported failure: ${detail} (\`service retry ${task.id}\` tries again)`,
  );
}

function agentEndedWithoutReport(
  d: Draft,
  out: Out,
  task: TaskView,
  e: Exited,
  session: SessionView | undefined,
  stopped: boolean,
): void {
  if (task.status !== "ORPHANED") {
    const reason = stopped ? RUN_STOPPED : e.diagnosis.reason;
    out.push({ kind: "store", change: { op: "orphan", taskId: task.id, reason } });
  }
  if (e.diagnosis.kind === DISK_FULL) return diskFull(d, out, task, e.diagnosis.reason, "keep");
  if (stopped) {
    out.push({ kind: "keep", taskId: task.id, reason: "run stopped" });
    // The card leaves running (its agent is gone) for queued: the next `service run` resumes it.
    out.journal(ev.taskRetried({ task_id: task.id, reason: STOPPED_REASON }));
    return;
  }
  // The work a new attempt continues from: the session's branch holds it (leftovers committed).
  const resumeFrom = e.hasWork ? e.sessionId : null;
  if (e.remote?.drained) return remoteDrained(out, task, e, resumeFrom);
  if (e.remote?.interrupted) return remoteInterrupted(d, out, task, e, resumeFrom);
  if (e.rateLimited) {
    // A parked adapter never burns an attempt: the task waits for it, or starts with a fallback.
    const reason = `rate limited: ${
      session?.adapter ?? "its adapter"
    } is parked; the task goes back to the queue (no attempt counted)`;
    out.push({ kind: "reap", taskId: task.id, reason: "rate limited" });
    out.push({
      kind: "store",
      change: { op: "requeue", taskId: task.id, reason, countAttempt: false, resumeFrom },
    });
    out.journal(ev.taskRetried({ task_id: task.id, reason }));
    out.log(task.id, reason);
    return;
  }
  const exitedOnItsOwn = !session?.endedBy && e.exitCode === 0;
  if (e.hasWork && exitedOnItsOwn) {
    // A CLI that cannot call the task API ends this way: its work is a completion candidate.
    out.push({ kind: "store", change: { op: "recover_done", taskId: task.id } });
    out.log(task.id, "exited without a report; landing its work through the gates");
    startLanding(d, out, task.id, "exited");
    return;
  }
  if (e.hasWork && d.settings.landUnreported && e.signalsPass) {
    out.push({ kind: "store", change: { op: "recover_done", taskId: task.id } });
    out.log(
      task.id,
      `${e.diagnosis.reason}; every completion signal passes, so its work lands without a ` +
        "report (recovery.land_unreported)",
    );
    startLanding(d, out, task.id, "interrupted");
    return;
  }
  // Interrupted (killed, timed out, crashed): its work is never landed as if it were finished.
  // Exited 0 on its own with nothing to land: said, since its exit alone reads like success.
  const reason = exitedOnItsOwn && !e.hasWork
    ? e.diagnosis.reason.replace(
      "without reporting completion",
      "without reporting completion and changed nothing in its worktree",
    )
    : e.diagnosis.reason;
  out.push({ kind: "reap", taskId: task.id, reason });
  attemptFailed(d, out, { ...task, status: "ORPHANED" }, {
    signals: [{ kind: e.diagnosis.kind, detail: reason }],
    reason,
    retryable: e.diagnosis.retryable,
    resumeFrom,
  });
}

/**
 * Its worker was stopping (a pod deleted, a node drained): not the task's failure. The lease goes
 * at once and the next attempt, on any worker, continues from what it pushed.
 */
function remoteDrained(out: Out, task: TaskView, e: Exited, resumeFrom: string | null): void {
  const reason = drainedReason(e.remote!.worker, e.hasWork, e.remote!.push_error);
  out.push({ kind: "reap", taskId: task.id, reason: "drained" });
  out.push({
    kind: "store",
    change: { op: "requeue", taskId: task.id, reason, countAttempt: false, resumeFrom },
  });
  out.journal(ev.taskRetried({ task_id: task.id, reason }));
  out.log(task.id, reason);
}

/**
 * A worker's agent ended while no orchestrator answered (the run was stopped), or its worker's
 * process restarted: not the task's failure. Its pushed work is kept — it lands under
 * `recovery.land_unreported` when every completion signal passes, else the next attempt
 * continues from it — and no attempt is counted.
 */
function remoteInterrupted(
  d: Draft,
  out: Out,
  task: TaskView,
  e: Exited,
  resumeFrom: string | null,
): void {
  const why = e.remote?.interrupted === "restart"
    ? `worker ${e.remote.worker} restarted and handed its session back`
    : `its agent ended on worker ${e.remote?.worker} while the run was stopped`;
  if (e.hasWork && d.settings.landUnreported && e.signalsPass) {
    out.push({ kind: "store", change: { op: "recover_done", taskId: task.id } });
    out.log(task.id, `${why}; every completion signal passes, so its work lands`);
    startLanding(d, out, task.id, "interrupted");
    return;
  }
  const next = e.hasWork
    ? "a new attempt continues from the work it pushed"
    : "it pushed no work; a new attempt starts afresh";
  const reason = `${why}; ${next} (no attempt counted)`;
  out.push({ kind: "reap", taskId: task.id, reason: why });
  out.push({
    kind: "store",
    change: { op: "requeue", taskId: task.id, reason, countAttempt: false, resumeFrom },
  });
  out.journal(ev.taskRetried({ task_id: task.id, reason }));
  out.log(task.id, reason);
}

/**
 * A step of the service's own failed on a full disk (lib/util/disk_full.ts): the machine's
 * problem, not the task's. No attempt is counted; the task, ORPHANED with the reason, keeps its
 * worktree (`keep`: what the agent left; `reap`: a start that got nowhere) and the run stops, so
 * that no other task uses up its attempts on the same disk. `service run` resumes it once there
 * is space again. (The store's changes may fail on that disk too: the next run then finds the task
 * claimed, and recovers it the same way, with no attempt counted.)
 */
function diskFull(
  d: Draft,
  out: Out,
  task: TaskView,
  reason: string,
  worktree: "keep" | "reap",
): void {
  out.push({ kind: worktree, taskId: task.id, reason: "the disk is full" });
  out.journal(ev.taskRetried({ task_id: task.id, reason }));
  out.log(task.id, reason);
  onStop(d, out, { type: "stop" });
}

type SpawnFailed = Extract<CoreEvent, { type: "spawn_failed" }>;

/**
 * `spawn_failed`: the task was claimed but its agent could not start. When the attempt got as
 * far as its worktree environment (a setup that failed), its claim is journaled first, so the
 * card and "What happened" show the attempt and what its setup said.
 */
export function onSpawnFailed(d: Draft, out: Out, e: SpawnFailed): void {
  d.starting.delete(e.taskId);
  d.dispatching.delete(e.taskId);
  d.launching.delete(e.taskId);
  const task = d.tasks.get(e.taskId);
  if (!task) return;
  if (e.attempt !== undefined) {
    recordClaim(d, out, {
      taskId: e.taskId,
      sessionId: e.sessionId,
      attempt: e.attempt,
      model: e.model,
      adapter: e.adapter,
      prepared: e.prepared,
      isolation: e.isolation,
    });
  }
  if (task.status === "CANCELLED") {
    // Cancelled while it started (on_change.ts left it to this outcome): no attempt failed.
    out.push({ kind: "reap", taskId: task.id, reason: "cancelled" });
    return recordCancel(out, task);
  }
  out.push({
    kind: "store",
    change: { op: "orphan", taskId: task.id, reason: e.diagnosis.reason },
  });
  if (e.diagnosis.kind === DISK_FULL) return diskFull(d, out, task, e.diagnosis.reason, "reap");
  out.push({ kind: "reap", taskId: task.id, reason: "the agent did not start" });
  attemptFailed(d, out, { ...task, status: "ORPHANED" }, {
    signals: [{ kind: e.diagnosis.kind, detail: e.diagnosis.reason }],
    reason: e.diagnosis.reason,
    retryable: e.diagnosis.retryable,
    resumeFrom: "keep", // it never started: the work it was to continue from is still there
  });
}

type Recovered = Extract<CoreEvent, { type: "recovered" }>;

/**
 * `recovered`: a task an earlier process left claimed, orphaned or done. The previous process
 * stopped (or died) before it could decide: a stop is not the task's failure, so no attempt is
 * counted, and interrupted work is never landed as if it were finished — a new attempt starts
 * from it (under `recovery.land_unreported`, it lands when every completion signal passes).
 */
export function onRecovered(d: Draft, out: Out, e: Recovered): void {
  const task = d.tasks.get(e.taskId);
  if (!task || d.sessions.has(task.id) || d.landings.has(task.id)) return;
  if (task.status === "DONE") return recoveredDone(d, out, task, e);
  if (task.status !== "CLAIMED" && task.status !== "IN_PROGRESS" && task.status !== "ORPHANED") {
    return;
  }
  if (task.status !== "ORPHANED") {
    out.push({ kind: "store", change: { op: "orphan", taskId: task.id, reason: LOST_REASON } });
  }
  const why = task.status !== "ORPHANED"
    ? LOST_REASON
    : task.summary === RUN_STOPPED
    ? "its agent was stopped with the run"
    : task.summary?.startsWith(DISK_FULL_SAID)
    ? "its attempt was interrupted by a full disk"
    : LOST_REASON;
  if (e.hasWork && d.settings.landUnreported && e.signalsPass) {
    out.push({ kind: "store", change: { op: "recover_done", taskId: task.id } });
    out.log(
      task.id,
      `${why}; every completion signal passes, so its work lands without a report ` +
        "(recovery.land_unreported)",
    );
    startLanding(d, out, task.id, "interrupted");
    return;
  }
  if (e.hasWorktree) out.push({ kind: "reap", taskId: task.id, reason: why });
  const next = e.hasWork
    ? "a new attempt continues from its kept work"
    : "it left no work; a new attempt starts afresh";
  const reason = `${why}; ${next} (no attempt counted)`;
  out.push({
    kind: "store",
    change: {
      op: "requeue",
      taskId: task.id,
      reason,
      countAttempt: false,
      // Without its worktree nothing is known of this session: the task's own choice stands.
      resumeFrom: e.hasWork && e.sessionId ? e.sessionId : e.hasWorktree ? null : undefined,
    },
  });
  out.journal(ev.taskRetried({ task_id: task.id, reason }));
  out.log(task.id, reason);
}

function recoveredDone(d: Draft, out: Out, task: TaskView, e: Recovered): void {
  if (task.operatorDone) {
    // Done for good by an operator: nothing to land; a worktree left behind is reaped (kept work
    // stays on its rescue ref).
    if (e.hasWorktree) out.push({ kind: "reap", taskId: task.id, reason: "done by an operator" });
    return;
  }
  if (e.hasWorktree) {
    out.log(task.id, "landing the work reported before the orchestrator stopped");
    startLanding(d, out, task.id);
    return;
  }
  // Reported, but its work is gone with its worktree: it must be done again.
  attemptFailed(d, out, task, {
    signals: [{ kind: "agent_lost", detail: "the reported work's worktree is gone" }],
    reason: "the reported work's worktree is gone",
    retryable: true,
  });
}
