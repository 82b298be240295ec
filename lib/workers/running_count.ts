/**
 * How many sessions a worker runs, as `service workers`, `status` and the board show it
 * (RUNNING, and `busy` against `idle`): the store's leases on its name. Counted whenever the
 * worker is heard from — a heartbeat, a claim, a report — so the last report of a busy worker
 * leaves it idle rather than `busy` with the count of its last heartbeat.
 */
import { ACTIVE } from "../tasks/lifecycle.ts";
import type { Task } from "../tasks/task.ts";

/** Sessions `worker` holds among `tasks`, leaving out `ended` (a session that just reported). */
export function sessionsHeldBy(
  tasks: readonly Pick<Task, "id" | "status" | "worker">[],
  worker: string,
  ended?: string,
): number {
  return tasks.filter((t) => ACTIVE.has(t.status) && t.worker === worker && t.id !== ended)
    .length;
}
