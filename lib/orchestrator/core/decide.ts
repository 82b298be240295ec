/**
 * The run loop's decision core (pure): the state and one event in, the next state and the
 * actions to take out — journal rows, store changes, spawns, terminations, landings, log lines.
 * No files, processes, clocks or randomness: the executor does the I/O and feeds outcomes back
 * as events; table tests drive every outcome through {@link decide}.
 */
import * as ev from "../../journal/events.ts";
import { onAgentExited, onRecovered, onSpawnFailed } from "./on_exit.ts";
import { onBatchAdopted, onBatchResult, onBatchSubmitted } from "./on_batch.ts";
import {
  onCaptured,
  onLandingChanged,
  onMergeResult,
  onRebaseResult,
  onReview,
} from "./on_landing.ts";
import { onTaskChanged } from "./on_change.ts";
import { onTick } from "./on_tick.ts";
import {
  onLaunchAdopted,
  onLaunchLapsed,
  onRemoteAdopted,
  onRemoteStartFailed,
  onWorkerAsks,
  onWorkersSeen,
} from "./on_worker.ts";
import { onSettle } from "./settle.ts";
import { onStop } from "./on_stop.ts";
import { Out, recordCancel, recordStart } from "./outcomes.ts";
import type { Action, CoreEvent } from "./protocol.ts";
import { type CoreState, type Draft, draft } from "./state.ts";
import { durationWords } from "../../util/duration_words.ts";
import { lineWords } from "../../util/line_words.ts";

/** One decision. */
export interface Step {
  state: CoreState;
  actions: Action[];
}

/** Decide what follows `event` in `state`. */
export function decide(state: CoreState, event: CoreEvent): Step {
  const d = draft(state);
  const out = new Out();
  (ON[event.type] as Handler<CoreEvent["type"]>)(d, out, event);
  return { state: d, actions: out.actions };
}

/** What one event of type `T` does to the draft. */
type Handler<T extends CoreEvent["type"]> = (
  d: Draft,
  out: Out,
  event: Extract<CoreEvent, { type: T }>,
) => void;

/** The handler of every event. */
const ON: { [T in CoreEvent["type"]]: Handler<T> } = {
  tick: (d, out) => onTick(d, out),
  settle: (d, out) => onSettle(d, out),
  spawned: onSpawned,
  spawn_failed: onSpawnFailed,
  batch_submitted: onBatchSubmitted,
  batch_adopted: onBatchAdopted,
  batch_result: onBatchResult,
  claim_lost: onClaimLost,
  worker_asks: onWorkerAsks,
  workers_seen: (d, _out, e) => onWorkersSeen(d, e),
  remote_start_failed: onRemoteStartFailed,
  remote_adopted: onRemoteAdopted,
  launch_lapsed: onLaunchLapsed,
  launch_adopted: onLaunchAdopted,
  agent_exited: onAgentExited,
  rate_limit_hit: onRateLimitHit,
  recovered: onRecovered,
  captured: onCaptured,
  merge_result: onMergeResult,
  landing_changed: onLandingChanged,
  rebase_result: onRebaseResult,
  review: onReview,
  task_changed: onTaskChanged,
  stop: onStop,
};

function onSpawned(d: Draft, out: Out, event: Extract<CoreEvent, { type: "spawned" }>): void {
  const task = d.tasks.get(event.taskId);
  recordStart(d, out, event);
  const fallback = event.adapter === d.settings.adapter ? "" : `, ${event.adapter}`;
  // The run's own number, and what the retry limit counts when earlier runs counted none.
  const counted = event.counted !== undefined && event.counted < event.attempt
    ? `, counted as ${event.counted} of ${d.settings.maxAttempts}`
    : "";
  out.log(
    event.taskId,
    `agent ${event.sessionId} started${event.worker ? ` on worker ${event.worker}` : ""} ` +
      `(${task?.role ?? "?"}, attempt ${event.attempt}${counted}${fallback})`,
  );
  // Stopped or cancelled while it started: it is ended at once (its exit records the rest).
  const endedBy = d.stopping ? "stop" : task?.status === "CANCELLED" ? "cancelled" : undefined;
  if (endedBy) {
    d.sessions.set(event.taskId, { ...d.sessions.get(event.taskId)!, endedBy });
    const now = endedBy === "stop" && d.stoppingNow ? { now: true as const } : {};
    out.push({ kind: "terminate", taskId: event.taskId, reason: endedBy, ...now });
  }
}

function onClaimLost(d: Draft, out: Out, event: Extract<CoreEvent, { type: "claim_lost" }>): void {
  d.starting.delete(event.taskId);
  d.batching.delete(event.taskId);
  d.dispatching.delete(event.taskId);
  d.launching.delete(event.taskId);
  // A cancel that came while it started was left to the start's outcome (on_change.ts).
  const task = d.tasks.get(event.taskId);
  if (task?.status === "CANCELLED") recordCancel(out, task);
}

function onRateLimitHit(
  d: Draft,
  out: Out,
  event: Extract<CoreEvent, { type: "rate_limit_hit" }>,
): void {
  const { type: _type, taskId, sessionId, named, ...hit } = event;
  out.journal(ev.rateLimited({
    task_id: taskId,
    session_id: sessionId,
    ...hit,
    reset_named: named,
  }));
  const left = durationWords(hit.until - d.now / 1000);
  const until = new Date(hit.until * 1000).toISOString().replace(/\.\d+Z$/, "Z");
  out.log(
    taskId,
    `RateLimitError: ${hit.adapter} log matched ${hit.rule}: ${lineWords(hit.line)} — ` +
      (named
        ? `${hit.adapter} parked until ${until}, the reset time its limit names (${left})`
        : `${hit.adapter} parked for the cooldown (${left})`),
  );
  const session = d.sessions.get(taskId);
  if (session && !session.endedBy) {
    d.sessions.set(taskId, { ...session, endedBy: "rate_limit" });
    out.push({ kind: "terminate", taskId, reason: "rate_limit" });
  }
}
