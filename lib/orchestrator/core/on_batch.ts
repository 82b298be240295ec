/**
 * The batch lane's outcomes (DESIGN.md §15). A submitted request is the task's attempt: its claim
 * is journaled with `lane: "batch"` and the request's batch. When the batch ends, a patch that
 * applied has made the task DONE and it lands like any reported work; any other outcome — the
 * patch did not apply, the request errored, expired or was canceled, or was never sent — sends
 * the task to the agent CLI in real time, with the reason journaled and told to the agent. The
 * batch try counts no attempt (the lane is tried once per task: ./settle.ts never routes a task
 * there again).
 */
import * as ev from "../../journal/events.ts";
import type { CoreEvent } from "./protocol.ts";
import { type Out, recordCancel, recordStart, startLanding } from "./outcomes.ts";
import type { Draft } from "./state.ts";

type Submitted = Extract<CoreEvent, { type: "batch_submitted" }>;
type Adopted = Extract<CoreEvent, { type: "batch_adopted" }>;
type Result = Extract<CoreEvent, { type: "batch_result" }>;

/** How each outcome that sends a task to real time is said. */
const FALLBACK_WORDS: Record<string, string> = {
  not_applied: "its batch patch did not apply",
  errored: "its batch request errored",
  expired: "its batch request expired before the provider ran it",
  canceled: "its batch request was canceled",
  not_submitted: "its batch request was not submitted",
};

/** `batch_submitted`: the card enters running, as a batch request. */
export function onBatchSubmitted(d: Draft, out: Out, e: Submitted): void {
  const task = d.tasks.get(e.taskId);
  // The provider expires it (24 h), not our clock.
  recordStart(d, out, { ...e, deadline: Number.POSITIVE_INFINITY, batchEligible: true });
  out.journal(ev.taskBatchSubmitted({
    task_id: e.taskId,
    provider: e.provider,
    batch_id: e.batchId,
    custom_id: e.customId,
  }));
  out.log(e.taskId, `submitted to the ${e.provider} batch API (batch ${e.batchId}, ${e.model})`);
  if (d.stopping) {
    d.sessions.delete(e.taskId);
    d.batchesLeft.set(e.taskId, e.batchId);
    out.log(e.taskId, `batch ${e.batchId} stays with the provider; \`service run\` polls it`);
  } else if (task?.status === "CANCELLED") {
    out.push({ kind: "terminate", taskId: e.taskId, reason: "cancelled" });
  }
}

/** `batch_adopted`: a request submitted before a stop is polled again. */
export function onBatchAdopted(d: Draft, out: Out, e: Adopted): void {
  d.sessions.set(e.taskId, {
    taskId: e.taskId,
    sessionId: e.sessionId,
    startedAt: e.startedAt,
    deadline: Number.POSITIVE_INFINITY,
    batchId: e.batchId,
  });
  out.log(e.taskId, `polling batch ${e.batchId}, submitted before the run stopped`);
}

/** `batch_result`. */
export function onBatchResult(d: Draft, out: Out, e: Result): void {
  d.starting.delete(e.taskId);
  d.batching.delete(e.taskId);
  const session = d.sessions.get(e.taskId);
  d.sessions.delete(e.taskId);
  const batchId = e.batchId ?? session?.batchId;
  out.journal(ev.taskBatchResult({
    task_id: e.taskId,
    batch_id: batchId,
    outcome: e.outcome,
    reason: e.reason,
  }));
  const task = d.tasks.get(e.taskId);
  if (!task) return;
  if (task.status === "CANCELLED") {
    out.push({ kind: "reap", taskId: task.id, reason: "cancelled" });
    return recordCancel(out, task);
  }
  if (e.outcome === "applied" && task.status === "DONE") {
    out.log(task.id, `the batch response's patch applied (${e.reason ?? "committed"}); landing it`);
    startLanding(d, out, task.id);
    return;
  }
  if (task.status !== "CLAIMED" && task.status !== "IN_PROGRESS" && task.status !== "ORPHANED") {
    return; // an operator moved it meanwhile: their word stands
  }
  const why = `${FALLBACK_WORDS[e.outcome] ?? `batch outcome ${e.outcome}`}${
    e.reason ? `: ${e.reason}` : ""
  }`;
  const reason = `${why}; one real-time attempt with the agent CLI follows (no attempt counted)`;
  if (task.status !== "ORPHANED") {
    out.push({ kind: "store", change: { op: "orphan", taskId: task.id, reason: why } });
  }
  out.push({ kind: "reap", taskId: task.id, reason: why });
  if (batchId !== undefined) {
    // Its claim put the card in running: the receipt says why it leaves the batch lane.
    out.journal(ev.taskVerificationFailed({
      task_id: task.id,
      signals: [{ kind: `batch_${e.outcome}`, detail: why }],
    }));
  }
  out.push({
    kind: "store",
    change: { op: "requeue", taskId: task.id, reason, countAttempt: false, resumeFrom: null },
  });
  out.journal(ev.taskRetried({ task_id: task.id, reason }));
  d.notes.set(
    task.id,
    `a one-shot request to the provider's batch API came to nothing (${why}); do the task ` +
      "with your tools",
  );
  out.log(task.id, reason);
}
