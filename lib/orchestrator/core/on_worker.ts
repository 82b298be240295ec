/**
 * Remote workers (DESIGN.md §16) in the decision core: a worker's request for tasks is answered
 * by the one scheduling policy (lib/orchestrator/schedule.ts) with the worker's free slots in
 * place of `max_agents` — its tasks hold their owned files like any running task, and a task
 * never starts before its dependencies' merges. A remote session's end comes as `agent_exited`
 * from its report, or from its lost lease (the task store's heartbeat monitor ORPHANs it).
 */
import { decideSchedule } from "../schedule.ts";
import { awaitsMerge, schedulable } from "./settle.ts";
import type { CoreEvent } from "./protocol.ts";
import type { Out } from "./outcomes.ts";
import type { Draft } from "./state.ts";
import * as ev from "../../journal/events.ts";
import { canStart } from "../../workers/fleet.ts";

/** The lease of a remote session ran out: its worker stopped heartbeating. */
export function leaseLostReason(worker: string, summary: string | null): string {
  return `worker ${worker} stopped heartbeating: its lease expired` +
    (summary ? ` (${summary})` : "");
}

/** `worker_asks`: the tasks `worker` gets now (none while the run stops or is read-only). */
export function onWorkerAsks(
  d: Draft,
  out: Out,
  e: Extract<CoreEvent, { type: "worker_asks" }>,
): void {
  const answer = (tasks: { taskId: string; adapter: string; note?: string }[]) =>
    out.push({ kind: "dispatch", requestId: e.requestId, worker: e.worker, tasks });
  if (d.stopping || d.verdict || e.free < 1) return answer([]);
  const tasks = [...d.tasks.values()];
  const busy = new Set([...d.sessions.keys(), ...d.starting]);
  const roles = e.roles && e.roles.length > 0 ? new Set(e.roles) : undefined;
  // Only tasks this worker can start an agent for, and not on a worker where one did not start.
  const offer = e.offer ?? {};
  const chainOf = (role: string) => d.settings.chains[role] ?? [d.settings.adapter];
  const chains = Object.fromEntries(
    [...new Set(tasks.map((t) => t.role))].map((role) => [
      role,
      chainOf(role).filter((a) => canStart(offer, a)),
    ]),
  );
  const ready = tasks.filter((t) =>
    t.status === "OPEN" && !busy.has(t.id) && !t.batch && (!roles || roles.has(t.role)) &&
    chains[t.role].length > 0 && !d.refusedBy?.get(t.id)?.has(e.worker)
  );
  const decision = decideSchedule({
    ready: ready.map(schedulable),
    // The worker's own slots: everything already running holds its files, not its slots.
    running: [],
    inBatch: [...busy].flatMap((id) => {
      const t = d.tasks.get(id);
      return t ? [schedulable(t)] : [];
    }),
    unmerged: tasks.filter((t) => awaitsMerge(d, t) && !busy.has(t.id)).map(schedulable),
    maxAgents: e.free,
    pendingMerge: new Set(tasks.filter((t) => awaitsMerge(d, t)).map((t) => t.id)),
    adapter: d.settings.adapter,
    // A worker runs the role's first adapter it can start, with its own keys: the
    // orchestrator's rate-limit parking is about the orchestrator's keys, not the worker's.
    chains,
    readOnly: d.readOnly,
  });
  for (const id of decision.start) {
    d.starting.add(id);
    d.dispatching.add(id);
  }
  answer(decision.start.map((id) => ({
    taskId: id,
    adapter: decision.adapters.get(id) ?? d.settings.adapter,
    ...(d.notes.has(id) ? { note: d.notes.get(id) } : {}),
  })));
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
