/**
 * Remote workers (DESIGN.md §16) in the decision core: a worker's request for tasks is answered
 * by the one scheduling policy (lib/orchestrator/schedule.ts) with the worker's free slots in
 * place of `max_agents` — its tasks hold their owned files like any running task, and a task
 * never starts before its dependencies' merges. A remote session's end comes as `agent_exited`
 * from its report, or from its lost lease (the task store's heartbeat monitor ORPHANs it).
 * The Kubernetes launcher asks the same way (`reserve`): its tasks are held for the Jobs it
 * creates (`launching`) until each Job's pod claims its own with a one-time ticket (DESIGN.md §17).
 */
import { decideSchedule } from "../schedule.ts";
import { awaitsMerge, schedulable } from "./settle.ts";
import type { CoreEvent } from "./protocol.ts";
import type { Out } from "./outcomes.ts";
import type { Draft } from "./state.ts";

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
  const tasks = [...d.tasks.values()];
  const busy = new Set([...d.sessions.keys(), ...d.starting]);
  const roles = e.roles && e.roles.length > 0 ? new Set(e.roles) : undefined;
  const ready = tasks.filter((t) =>
    t.status === "OPEN" && !busy.has(t.id) && !t.batch && (!roles || roles.has(t.role)) &&
    (e.task === undefined || t.id === e.task)
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
    // A worker runs the role's first adapter with its own keys: the orchestrator's rate-limit
    // parking is about the orchestrator's keys, not the worker's.
    chains: d.settings.chains,
    readOnly: d.readOnly,
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
