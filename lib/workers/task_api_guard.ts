/**
 * A worker token on the plain task API (`/tasks/next`, `/tasks/<id>/claim`, `/complete`, `/fail`,
 * `/heartbeat`): it serves the shared backlog, tasks of no run. A run's tasks reach workers only
 * through `POST /workers/<name>/claim`, and are renewed and reported only with the capability of
 * the session that claim made (docs/workers.md "Tokens"): otherwise the token in a pod's Secret
 * could claim any task of the run, or complete or fail the one another worker's agent runs.
 */
import type { Ctx } from "../http/context.ts";
import { DomainError } from "../errors.ts";
import type { Task } from "../tasks/task.ts";

/** Whether `c`'s caller holds a worker token (scope `worker`). */
export function callerIsWorker(c: Ctx): boolean {
  return c.get("principal")?.scope === "worker";
}

/** Whether a worker token may take or report `task` through the plain task API. */
export function workerMayTouch(task: Pick<Task, "run_id">): boolean {
  return task.run_id === null;
}

/** 403 `run_task` when a worker token acts on a task of a run through the plain task API. */
export function refuseRunTaskToWorker(c: Ctx, task: Task | undefined, action: string): void {
  if (!task || !callerIsWorker(c) || workerMayTouch(task)) return;
  throw new DomainError(
    "forbidden",
    "run_task",
    `a worker token may not ${action} task ${JSON.stringify(task.id)}: it belongs to run ` +
      `${task.run_id}, whose tasks a worker takes through POST /workers/<name>/claim and ` +
      "reports with that claim's session capability (`service worker`, docs/workers.md)",
  );
}
