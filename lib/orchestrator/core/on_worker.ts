/**
 * Remote workers (DESIGN.md §16) in the decision core: a worker's request for tasks is answered
 * by the one scheduling policy (lib/orchestrator/schedule.ts) with the worker's free slots in
 * place of `max_agents` — its tasks hold their owned files like any running task, and a task
 * never starts before its dependencies' merges. A remote session's end comes as `agent_exited`
 * from its report, or from its lost lease (the task store's heartbeat monitor ORPHANs it).
 * The Kubernetes launcher asks the same way (`reserve`): its tasks are held for the Jobs it
 * creates (`launching`) until each Job's pod claims its own with a one-time ticket (DESIGN.md §17).
 */
import { decideSchedule, type ScheduleDecision } from "../schedule.ts";
import { awaitsMerge, schedulable } from "./settle.ts";
import type { CoreEvent } from "./protocol.ts";
import type { Out } from "./outcomes.ts";
import type { CoreState, Draft } from "./state.ts";
import * as ev from "../../journal/events.ts";
import { canStart } from "../../workers/fleet.ts";

/** The lease of a remote session ran out: its worker stopped heartbeating. */
export function leaseLostReason(worker: string, summary: string | null): string {
  return `worker ${worker} stopped heartbeating: its lease expired` +
    (summary ? ` (${summary})` : "");
}

/**
 * Why a task drained from `worker` goes back to the queue: said the same way in the journal
 * (`task_retried`), `status` and on the board.
 */
export function drainedReason(worker: string, hasWork: boolean, pushError?: string): string {
  return `drained from worker ${worker} (it was stopping); ` +
    (hasWork
      ? "a new attempt continues from the work it pushed"
      : pushError
      ? `its work did not reach the remote (${pushError}); a new attempt starts afresh`
      : "it pushed no work; a new attempt starts afresh") +
    " (no attempt counted)";
}

/** `worker_asks`: the tasks `worker` gets now (none while the run stops or is read-only). */
export function onWorkerAsks(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "worker_asks" }>,
): void {
  const answer = (tasks: { taskId: string; adapter: string; note?: string }[]) =>
    out.push({
      kind: "dispatch",
      requestId: e.requestId,
      worker: e.worker,
      tasks,
      ...(e.reserve ? { reserve: true } : {}),
    });
  if (d.stopping || d.verdict || e.free < 1) return answer([]);
  const reserved = e.task === undefined ? undefined : d.launching.get(e.task);
  if (reserved !== undefined) {
    // A Job's pod claims the task reserved for it: decided when its Job was (still `starting`).
    d.launching.delete(e.task!);
    const note = d.notes.get(e.task!);
    return answer([{ taskId: e.task!, adapter: reserved, ...(note ? { note } : {}) }]);
  }
  const decision = workerSchedule(d, e.free, {
    roles: e.roles,
    only: e.task,
    offer: e.offer,
    worker: e.worker,
  });
  for (const id of decision.start) {
    d.starting.add(id);
    d.dispatching.add(id);
    if (e.reserve) d.launching.set(id, decision.adapters.get(id) ?? d.settings.adapter);
  }
  answer(decision.start.map((id) => ({
    taskId: id,
    adapter: decision.adapters.get(id) ?? d.settings.adapter,
    ...(d.notes.has(id) ? { note: d.notes.get(id) } : {}),
  })));
}

/** Which tasks a claim may take. */
export interface WorkerScheduleOptions {
  /** The worker's roles (none: any). */
  roles?: readonly string[];
  /** A claim ticket's task: that one only. */
  only?: string;
  /** The adapters the worker can start (absent: any; lib/workers/fleet.ts). */
  offer?: { adapters?: string[] };
  /** The worker asking: a task whose agent did not start on it is not handed to it again. */
  worker?: string;
}

/**
 * What a worker with `free` slots taking `roles` (any when absent) would get now: the one
 * scheduling policy with the worker's slots in place of `max_agents` (pure; `/metrics` asks it
 * with unbounded slots for the tasks that are ready).
 */
export function workerSchedule(
  s: CoreState,
  free: number,
  { roles, only, offer = {}, worker }: WorkerScheduleOptions = {},
): ScheduleDecision {
  const tasks = [...s.tasks.values()];
  const busy = new Set([...s.sessions.keys(), ...s.starting]);
  const wanted = roles && roles.length > 0 ? new Set(roles) : undefined;
  // Only tasks this worker can start an agent for, and not on a worker where one did not start.
  const chainOf = (role: string) => s.settings.chains[role] ?? [s.settings.adapter];
  const chains = Object.fromEntries(
    [...new Set(tasks.map((t) => t.role))].map((role) => [
      role,
      chainOf(role).filter((a) => canStart(offer, a)),
    ]),
  );
  const ready = tasks.filter((t) =>
    t.status === "OPEN" && !busy.has(t.id) && !t.batch && (!wanted || wanted.has(t.role)) &&
    (only === undefined || t.id === only) && chains[t.role].length > 0 &&
    (worker === undefined || !s.refusedBy?.get(t.id)?.has(worker))
  );
  return decideSchedule({
    ready: ready.map(schedulable),
    // The worker's own slots: everything already running holds its files, not its slots.
    running: [],
    inBatch: [...busy].flatMap((id) => {
      const t = s.tasks.get(id);
      return t ? [schedulable(t)] : [];
    }),
    unmerged: tasks.filter((t) => awaitsMerge(s, t) && !busy.has(t.id)).map(schedulable),
    maxAgents: free,
    pendingMerge: new Set(tasks.filter((t) => awaitsMerge(s, t)).map((t) => t.id)),
    adapter: s.settings.adapter,
    // A worker runs the role's first adapter it can start, with its own keys: the
    // orchestrator's rate-limit parking is about the orchestrator's keys, not the worker's.
    chains,
    readOnly: s.readOnly,
  });
}

/** `remote_adopted`: a session an earlier process handed to a worker goes on there. */
export function onRemoteAdopted(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "remote_adopted" }>,
): void {
  if (d.sessions.has(e.taskId)) return;
  d.sessions.set(e.taskId, {
    taskId: e.taskId,
    sessionId: e.sessionId,
    startedAt: e.startedAt,
    deadline: e.deadline,
    worker: e.worker,
  });
  out.log(
    e.taskId,
    `agent ${e.sessionId} still runs on worker ${e.worker}; waiting for its report`,
  );
}

/** Forget `taskId`'s reservation for a Job: it is ready again (true when it had one). */
export function dropReservation(d: Draft, taskId: string): boolean {
  if (!d.launching.delete(taskId)) return false;
  d.starting.delete(taskId);
  d.dispatching.delete(taskId);
  return true;
}

/** `launch_lapsed`: the Job ended before its pod claimed the task, or could not be created. */
export function onLaunchLapsed(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "launch_lapsed" }>,
): void {
  if (!dropReservation(d, e.taskId)) return;
  out.log(e.taskId, e.reason);
}

/** `launch_adopted`: an earlier process's Job for a task that is still OPEN goes on. */
export function onLaunchAdopted(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "launch_adopted" }>,
): void {
  const task = d.tasks.get(e.taskId);
  if (!task || task.status !== "OPEN" || d.sessions.has(e.taskId) || d.starting.has(e.taskId)) {
    return;
  }
  d.starting.add(e.taskId);
  d.dispatching.add(e.taskId);
  d.launching.set(e.taskId, d.settings.chains[task.role]?.[0] ?? d.settings.adapter);
  out.log(e.taskId, `Job ${e.job} still runs; waiting for its pod to claim the task`);
}

/** `workers_seen`: the slots remote workers offer now (the waits of ready tasks say so). */
export function onWorkersSeen(d: Draft, e: Extract<CoreEvent, { type: "workers_seen" }>): void {
  d.workers = e.workers;
}

/**
 * `remote_start_failed`: the agent did not start on the worker — the worker's fault, not the
 * task's. The task goes back to the queue with no attempt counted, to another worker: it is
 * never handed to this one again in the run (repeated failures cordon the worker).
 */
export function onRemoteStartFailed(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "remote_start_failed" }>,
): void {
  const session = d.sessions.get(e.taskId);
  if (session?.sessionId !== e.sessionId) return; // a late report of an earlier session
  d.sessions.delete(e.taskId);
  const refused = new Map(d.refusedBy ?? []);
  refused.set(e.taskId, new Set([...(refused.get(e.taskId) ?? []), e.worker]));
  d.refusedBy = refused;
  const task = d.tasks.get(e.taskId);
  out.journal(ev.agentExited({
    task_id: e.taskId,
    session_id: e.sessionId,
    exit_code: -1,
    duration_ms: 0,
    worker: e.worker,
    commit: null,
    start_failure: e.reason,
  }));
  if (!task || (task.status !== "CLAIMED" && task.status !== "IN_PROGRESS")) return;
  const reason = `the agent did not start on worker ${e.worker}: ${e.reason}; the task goes ` +
    "to another worker (no attempt counted)";
  out.push({ kind: "store", change: { op: "orphan", taskId: task.id, reason } });
  out.push({ kind: "reap", taskId: task.id, reason: "the agent did not start on its worker" });
  // Its claim counted an attempt: given back. The work it was to continue from stays.
  out.push({
    kind: "store",
    change: { op: "requeue", taskId: task.id, reason, countAttempt: false },
  });
  out.journal(ev.taskRetried({ task_id: task.id, reason }));
  out.log(task.id, reason);
  if (e.cordoned) out.log(null, `worker ${e.worker} is cordoned: ${e.cordoned}`);
}
