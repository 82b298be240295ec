/**
 * `stop` (`service stop`, Ctrl-C, a full disk): no new agent starts; the run's own agents get
 * SIGTERM (SIGKILL after the grace, or at once with `now`) and their work is kept; a worker's
 * agent, a batch request and a Job go on and report to the next `service run`. A stop counts no
 * attempt.
 */
import { dropReservation } from "./on_worker.ts";
import type { Out } from "./outcomes.ts";
import type { CoreEvent } from "./protocol.ts";
import type { Draft } from "./state.ts";

/** `stop`. */
export function onStop(d: Draft, out: Out, event: Extract<CoreEvent, { type: "stop" }>): void {
  if (d.stopping) {
    if (event.now) stopNow(d, out);
    return;
  }
  d.stopping = true;
  // A batch request stays with its provider: `service run` polls it again (never resubmits).
  for (const s of [...d.sessions.values()].filter((s) => s.batchId !== undefined)) {
    d.sessions.delete(s.taskId);
    d.batchesLeft.set(s.taskId, s.batchId!);
    out.log(s.taskId, `batch ${s.batchId} stays with the provider; \`service run\` polls it`);
  }
  // A Job whose pod has not claimed its task yet goes on: the next process adopts it.
  for (const taskId of [...d.launching.keys()]) {
    dropReservation(d, taskId);
    out.log(taskId, "its Job goes on; the next `service run` adopts it");
  }
  // A worker's agent goes on: the worker keeps its lease and reports to the next process.
  for (const s of [...d.sessions.values()].filter((s) => s.worker !== undefined)) {
    d.sessions.delete(s.taskId);
    out.log(
      s.taskId,
      `agent ${s.sessionId} goes on on worker ${s.worker}; it reports to the next \`service run\``,
    );
  }
  const live = [...d.sessions.values()].filter((s) => !s.endedBy);
  if (live.length > 0) out.log(null, `stopping ${live.length} agent(s); their work is kept`);
  for (const s of live) {
    d.sessions.set(s.taskId, { ...s, endedBy: "stop" });
    out.push({ kind: "terminate", taskId: s.taskId, reason: "stop" });
  }
  if (event.now) stopNow(d, out);
}

/** A stop that will not wait: the agents the stop is ending get SIGKILL now (work still kept). */
function stopNow(d: Draft, out: Out): void {
  d.stoppingNow = true; // and one whose start is under way, once it has started
  const ending = [...d.sessions.values()].filter((s) =>
    s.endedBy === "stop" && s.worker === undefined && s.batchId === undefined
  );
  if (ending.length === 0) return;
  out.log(null, `stopping now: SIGKILL to ${ending.length} agent(s); their work is kept`);
  for (const s of ending) {
    out.push({ kind: "terminate", taskId: s.taskId, reason: "stop", now: true });
  }
}
