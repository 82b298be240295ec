/**
 * An agent ended (or never started, or was lost with an earlier process): what its task's
 * status says happened, and what follows — landing reported work, recording an agent's own
 * failure or an operator's cancel, recovering partial work, or a new attempt per the policy.
 */
import * as ev from "../../journal/events.ts";
import type { CoreEvent } from "./protocol.ts";
import { attemptFailed, type Out, recordCancel, startLanding } from "./outcomes.ts";
import type { Draft, TaskView } from "./state.ts";

type Exited = Extract<CoreEvent, { type: "agent_exited" }>;

/** `agent_exited`. */
export function onAgentExited(d: Draft, out: Out, e: Exited): void {
  const session = d.sessions.get(e.taskId);
  d.sessions.delete(e.taskId);
  const task = d.tasks.get(e.taskId);
  out.journal(ev.agentExited({
    task_id: e.taskId,
    session_id: e.sessionId,
    exit_code: e.exitCode,
    duration_ms: e.durationMs,
    ended_by: session?.endedBy,
  }));
  if (!task) return;
  const stopped = session?.endedBy === "stop" || d.stopping;
  switch (task.status) {
    case "DONE":
      if (stopped) {
        // Reported as the run stopped: the next run lands it (its worktree is kept).
        out.push({ kind: "keep", taskId: task.id, reason: "run stopped before landing" });
        return;
      }
      startLanding(d, out, task.id, false);
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
      return agentEndedWithoutReport(d, out, task, e, stopped);
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
  stopped: boolean,
): void {
  const orphan = () => {
    if (task.status !== "ORPHANED") {
      out.push({
        kind: "store",
        change: { op: "orphan", taskId: task.id, reason: e.diagnosis.reason },
      });
    }
  };
  if (stopped) {
    if (task.status !== "ORPHANED") {
      out.push({ kind: "store", change: { op: "orphan", taskId: task.id, reason: "run stopped" } });
    }
    out.push({ kind: "keep", taskId: task.id, reason: "run stopped" });
    // The card leaves running (its agent is gone) for queued: the next `service run` resumes it.
    out.journal(ev.taskRetried({ task_id: task.id, reason: STOPPED_REASON }));
    return;
  }
  orphan();
  if (e.rateLimited) {
    const reason = "rate limited: the task resumes after the cooldown";
    out.push({
      kind: "store",
      change: { op: "requeue", taskId: task.id, reason, countAttempt: false },
    });
    out.journal(ev.taskRetried({ task_id: task.id, reason }));
    out.push({ kind: "reap", taskId: task.id, reason: "rate limited" });
    out.log(task.id, reason);
    return;
  }
  if (e.hasWork) {
    out.push({ kind: "store", change: { op: "recover_done", taskId: task.id } });
    out.log(task.id, `${e.diagnosis.reason}; recovered partial work, landing it through the gates`);
    startLanding(d, out, task.id, true);
    return;
  }
  out.push({ kind: "reap", taskId: task.id, reason: e.diagnosis.reason });
  attemptFailed(d, out, { ...task, status: "ORPHANED" }, {
    signals: [{ kind: e.diagnosis.kind, detail: e.diagnosis.reason }],
    reason: e.diagnosis.reason,
    retryable: e.diagnosis.retryable,
  });
}

type SpawnFailed = Extract<CoreEvent, { type: "spawn_failed" }>;

/** `spawn_failed`: the task was claimed but its agent could not start. */
export function onSpawnFailed(d: Draft, out: Out, e: SpawnFailed): void {
  d.starting.delete(e.taskId);
  const task = d.tasks.get(e.taskId);
  if (!task) return;
  out.push({
    kind: "store",
    change: { op: "orphan", taskId: task.id, reason: e.diagnosis.reason },
  });
  out.push({ kind: "reap", taskId: task.id, reason: "the agent did not start" });
  attemptFailed(d, out, { ...task, status: "ORPHANED" }, {
    signals: [{ kind: e.diagnosis.kind, detail: e.diagnosis.reason }],
    reason: e.diagnosis.reason,
    retryable: e.diagnosis.retryable,
  });
}

type Recovered = Extract<CoreEvent, { type: "recovered" }>;

/** Why a task's card goes back to queued when the run stops under it. */
const STOPPED_REASON = "the run stopped; `service run` resumes it (its work is kept)";

/** The agent was lost when an earlier orchestrator process stopped or died. */
export const LOST_REASON = "its agent was lost when the orchestrator stopped";

/** `recovered`: a task an earlier process left claimed, orphaned or done. */
export function onRecovered(d: Draft, out: Out, e: Recovered): void {
  const task = d.tasks.get(e.taskId);
  if (!task || d.sessions.has(task.id) || d.landings.has(task.id)) return;
  if (task.status === "DONE") {
    if (e.hasWorktree) {
      out.log(task.id, "landing the work reported before the orchestrator stopped");
      startLanding(d, out, task.id, false);
      return;
    }
    // Reported, but its work is gone with its worktree: it must be done again.
    attemptFailed(d, out, task, {
      signals: [{ kind: "agent_lost", detail: "the reported work's worktree is gone" }],
      reason: "the reported work's worktree is gone",
      retryable: true,
    });
    return;
  }
  if (task.status !== "CLAIMED" && task.status !== "IN_PROGRESS" && task.status !== "ORPHANED") {
    return;
  }
  if (task.status !== "ORPHANED") {
    out.push({ kind: "store", change: { op: "orphan", taskId: task.id, reason: LOST_REASON } });
  }
  if (e.hasWork) {
    out.push({ kind: "store", change: { op: "recover_done", taskId: task.id } });
    out.log(task.id, "recovering the partial work of the interrupted run");
    startLanding(d, out, task.id, true);
    return;
  }
  if (e.hasWorktree) out.push({ kind: "reap", taskId: task.id, reason: LOST_REASON });
  attemptFailed(d, out, { ...task, status: "ORPHANED" }, {
    signals: [{ kind: "agent_lost", detail: LOST_REASON }],
    reason: LOST_REASON,
    retryable: true,
  });
}
