/**
 * A worker's hold on its tasks (DESIGN.md §16), read from the task store: a session holds its
 * task while the task names that session and that worker and has not been given up (ORPHANED
 * when its heartbeats stopped for `heartbeat_timeout_s`, OPEN again, claimed by another). A
 * report or heartbeat of a session that holds nothing is refused (409), so work never lands
 * twice. (Which token may speak for a worker name: lib/workers/roster.ts; for a session: the
 * capability its claim carried, lib/auth/agent_credentials.ts.)
 */
import { ConflictError } from "../errors.ts";
import type { Task } from "../tasks/task.ts";
import type { TaskStore } from "../tasks/store.ts";

/** Statuses a worker's session may still report from (it reported or was told to end). */
const HELD = new Set(["CLAIMED", "IN_PROGRESS", "DONE", "FAILED", "CANCELLED"]);

/** Whether `worker`'s `sessionId` holds `taskId` now. */
export type Lease = { held: true; task: Task } | { held: false; reason: string };

/** Read the lease of `worker`'s session on `taskId` (pure over the store's record). */
export function leaseOf(
  task: Task | undefined,
  worker: string,
  sessionId: string,
): Lease {
  if (!task) return { held: false, reason: "no such task" };
  if (task.session_id !== sessionId || task.worker !== worker) {
    return {
      held: false,
      reason: `task ${task.id} is no longer held by session ${sessionId} on worker ${worker} ` +
        `(it is ${task.status}${task.session_id ? `, session ${task.session_id}` : ""})`,
    };
  }
  if (!HELD.has(task.status)) {
    return {
      held: false,
      reason: task.status === "ORPHANED"
        ? `the lease of session ${sessionId} expired (no heartbeat for heartbeat_timeout_s)`
        : `task ${task.id} is ${task.status}`,
    };
  }
  return { held: true, task };
}

/** The lease of a report, or 409 `lease_expired` naming why it is gone. */
export function requireLease(
  store: TaskStore,
  worker: string,
  taskId: string,
  sessionId: string,
): Task {
  const lease = leaseOf(store.get(taskId), worker, sessionId);
  if (!lease.held) {
    throw new ConflictError("lease_expired", `${lease.reason}; nothing of this session lands`);
  }
  return lease.task;
}
