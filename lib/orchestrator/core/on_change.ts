/**
 * A task of the run changed outside the loop — an operator cancelled, retried or completed it,
 * an agent reported failure through the task API — and the run reacts: ends the agent, drops
 * the landing, records what happened.
 */
import { recordAgentFailure } from "./on_exit.ts";
import { dropReservation, leaseLostReason } from "./on_worker.ts";
import type { CoreEvent } from "./protocol.ts";
import { operatorRetryRows, type Out, recordCancel, recordOperatorDone } from "./outcomes.ts";
import type { Draft } from "./state.ts";

/** `task_changed`. */
export function onTaskChanged(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "task_changed" }>,
): void {
  const task = d.tasks.get(e.taskId);
  if (!task) return;
  if (e.to === "OPEN" && (e.from === "FAILED" || e.from === "CANCELLED")) {
    // An operator's retry or a reopened ticket (it may be BLOCKED again already, waiting on a
    // dependency). A cancel this loop had not acted on yet leaves its agent running on a claim
    // the retry took away: it is ended, and the new attempt starts once it is gone.
    const session = d.sessions.get(task.id);
    if (session && !session.endedBy) {
      d.sessions.set(task.id, { ...session, endedBy: "cancelled" });
      out.push({ kind: "terminate", taskId: task.id, reason: "cancelled" });
    }
    const rows = operatorRetryRows(task);
    for (const row of rows) out.journal(row);
    out.log(task.id, String(rows[0].data.reason));
    return;
  }
  if (task.status !== e.to) return; // moved again since: the later change decides
  const session = d.sessions.get(task.id);
  switch (e.to) {
    case "CANCELLED":
      if (session) {
        if (!session.endedBy) {
          d.sessions.set(task.id, { ...session, endedBy: "cancelled" });
          out.push({ kind: "terminate", taskId: task.id, reason: "cancelled" });
        }
        return; // the exit records it
      }
      // Reserved for a Job whose pod has not claimed it: the launcher deletes the Job.
      if (dropReservation(d, task.id)) return recordCancel(out, task);
      // Its agent is starting: the start's outcome ends it and records the cancel (decide.ts).
      if (d.starting.has(task.id)) return;
      // Its merge is under way: the merge's result says whether the cancel came in time.
      if (d.landings.get(task.id)?.stage === "merging") {
        d.landings.set(task.id, { ...d.landings.get(task.id)!, cancelled: true });
        return;
      }
      if (d.landings.delete(task.id)) {
        out.push({ kind: "reap", taskId: task.id, reason: "cancelled" });
      }
      recordCancel(out, task);
      return;
    case "FAILED":
      // Through POST /tasks/<id>/fail: a running (or starting) agent's exit records it.
      if (
        (e.from === "CLAIMED" || e.from === "IN_PROGRESS") && !session && !d.starting.has(task.id)
      ) {
        recordAgentFailure(out, task);
      }
      return;
    case "DONE":
      // An operator settled a task nobody worked on: done for good, nothing to land.
      if (task.operatorDone) recordOperatorDone(out, task);
      return;
    case "ORPHANED":
      // A remote worker's lease ran out (the heartbeat monitor): what it pushed is its work.
      if (session?.worker !== undefined && !session.lost) {
        d.sessions.set(task.id, { ...session, lost: true });
        out.push({
          kind: "remote_lost",
          taskId: task.id,
          sessionId: session.sessionId,
          reason: leaseLostReason(session.worker, null),
        });
      }
      return;
  }
}
