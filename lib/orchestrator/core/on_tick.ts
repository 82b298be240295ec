/**
 * The clock's decision (`tick`, once a second): end agents past their deadline (or that reported
 * and linger), retry merges that wait, then settle — a rate-limit cooldown that ran out or a
 * budget that changed may let tasks start. Every other event is settled when it is decided.
 */
import { onSettle } from "./settle.ts";
import type { Out } from "./outcomes.ts";
import type { Draft } from "./state.ts";

/** `tick`. */
export function onTick(d: Draft, out: Out): void {
  checkDeadlines(d, out);
  if (!d.stopping) retryWaitingMerges(d, out);
  onSettle(d, out);
}

function checkDeadlines(d: Draft, out: Out): void {
  for (const s of d.sessions.values()) {
    if (s.endedBy) continue;
    const status = d.tasks.get(s.taskId)?.status;
    if (status === "CANCELLED") {
      d.sessions.set(s.taskId, { ...s, endedBy: "cancelled" });
      out.push({ kind: "terminate", taskId: s.taskId, reason: "cancelled" });
      continue;
    }
    if (s.batchId !== undefined) continue; // a batch request: its result ends it
    if (status === "DONE" || status === "FAILED") {
      // Reported (or failed) but still running: it gets a grace to exit, then it is ended.
      const reportedAt = s.reportedAt ?? d.now;
      if (d.now - reportedAt >= d.settings.reportedExitGraceMs) {
        d.sessions.set(s.taskId, { ...s, reportedAt, endedBy: "reported" });
        out.push({ kind: "terminate", taskId: s.taskId, reason: "reported" });
      } else if (s.reportedAt === undefined) {
        d.sessions.set(s.taskId, { ...s, reportedAt });
      }
      continue;
    }
    if (d.now >= s.deadline) {
      d.sessions.set(s.taskId, { ...s, endedBy: "timeout" });
      out.log(s.taskId, `agent timeout after ${Math.round((d.now - s.startedAt) / 1000)} s`);
      out.push({ kind: "terminate", taskId: s.taskId, reason: "timeout" });
    }
  }
}

function retryWaitingMerges(d: Draft, out: Out): void {
  for (const l of d.landings.values()) {
    if (l.stage !== "waiting" || d.now - l.lastTry < d.settings.mergeRetryMs) continue;
    d.landings.set(l.taskId, { ...l, stage: "merging", lastTry: d.now });
    out.push({ kind: "merge", taskId: l.taskId });
  }
}
