/**
 * Operator control of tasks from the CLI (`service cancel`, `service retry`): through the task
 * API of the process that owns the task store (a run or `service serve`), else on the store
 * directly; an operator's completion through the task API is journaled the same way. The run journal records the change: a live run's orchestrator does it when it sees
 * the change; otherwise this module appends the same rows (one constructor each, shared with
 * the decision core).
 */
import { appendEvents, JournalPoisonedError } from "../journal/journal_file.ts";
import { journalDamage } from "../runs/journal_damage.ts";
import type { JournalEvent } from "../journal/row.ts";
import { loadConfig } from "../config/load.ts";
import { serverUrlFor, TaskClient, TaskStoreUnavailable } from "../tasks/client.ts";
import { TaskStoreBusyError } from "../tasks/owner.ts";
import { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { processAlive } from "../util/process_alive.ts";
import { journalPath, workspacePaths } from "../workspace.ts";
import { cancelRows, operatorDoneRows, operatorRetryRows } from "./core/outcomes.ts";
import { readRunState } from "../runs/run_state.ts";
import { settleWorktrees } from "../worktrees/settle.ts";
import { liveAgentSessions } from "../agents/pid_files.ts";

/** Statuses an operator can cancel (the lifecycle's cancel, lib/tasks/lifecycle.ts). */
export { CANCELLABLE } from "../tasks/lifecycle.ts";

/** Access to the workspace's tasks for an operator. */
export interface TaskControl {
  /** `server` (through a running process's task API) or `store` (opened here). */
  via: "server" | "store";
  list(): Promise<Task[]>;
  cancel(id: string, reason?: string): Promise<Task>;
  retry(id: string): Promise<Task>;
  close(): Promise<void>;
}

/** Open the task store, or talk to the process that holds it. */
export async function openTaskControl(root: string): Promise<TaskControl> {
  const paths = workspacePaths(root);
  const config = await loadConfig(root);
  let busy: TaskStoreBusyError;
  try {
    const store = await TaskStore.open(paths, {
      roles: config ? new Set(Object.keys(config.roles)) : undefined,
      heartbeatTimeoutS: config?.heartbeat_timeout_s,
      warn: () => {},
    });
    return {
      via: "store",
      list: () => Promise.resolve(store.list()),
      cancel: (id, reason) => store.cancel(id, reason),
      retry: (id) => store.retry(id),
      close: () => store.close(),
    };
  } catch (e) {
    if (!(e instanceof TaskStoreBusyError)) throw e;
    busy = e;
  }
  let url: string;
  try {
    url = await serverUrlFor(root);
  } catch (e) {
    if (!(e instanceof TaskStoreUnavailable)) throw e;
    throw new TaskStoreUnavailable(
      undefined,
      `the task store is open in process ${busy.pid} (${busy.purpose}), but no server of this ` +
        `workspace answers: ${e.message}`,
    );
  }
  const client = new TaskClient({ url });
  const post = async (id: string, action: string, body: Record<string, unknown>) =>
    (await client.request<Task>("POST", `/tasks/${encodeURIComponent(id)}/${action}`, body))!;
  return {
    via: "server",
    list: async () => (await client.request<{ tasks: Task[] }>("GET", "/tasks"))!.tasks,
    cancel: (id, reason) => post(id, "cancel", { operator: true, ...(reason ? { reason } : {}) }),
    retry: (id) => post(id, "retry", {}),
    close: () => Promise.resolve(),
  };
}

/** An operator's change of a task that its run's journal records. */
export type OperatorChange = "cancel" | "retry" | "complete";

/** The rows of an operator's cancel, retry or completion of `task`. */
function operatorRows(kind: OperatorChange, task: Task): JournalEvent[] {
  switch (kind) {
    case "cancel":
      return cancelRows(task);
    case "retry":
      return operatorRetryRows(task);
    case "complete":
      return operatorDoneRows(task);
  }
}

/** Whether an operator's change was journaled, and why not when its run's journal refused it. */
export interface OperatorJournaling {
  journaled: boolean;
  /**
   * The run's journal does not verify, so it refused the row: the change stands in the task
   * store alone (lib/runs/journal_damage.ts). Said to the operator, never hidden.
   */
  refused?: string;
}

/**
 * Journal an operator's change of `task` in its run's journal, unless that run's orchestrator
 * is live (it journals what it sees). Tasks of no run (the task API's) have no journal.
 */
export async function journalOperatorChange(
  root: string,
  kind: OperatorChange,
  task: Task,
): Promise<OperatorJournaling> {
  if (!task.run_id) return { journaled: false };
  const paths = workspacePaths(root);
  const state = await readRunState(paths);
  if (state?.run_id === task.run_id && state.status === "running" && processAlive(state.pid)) {
    return { journaled: false };
  }
  try {
    await appendEvents(journalPath(paths, task.run_id), operatorRows(kind, task));
  } catch (e) {
    if (!(e instanceof JournalPoisonedError)) throw e;
    return {
      journaled: false,
      refused: `not journaled: run ${task.run_id}'s journal does not verify (${
        journalDamage(e.fault).words
      }); the task store holds the ${kind}`,
    };
  }
  return { journaled: true };
}

/**
 * After an operator's cancel that no live run saw (`journalOperatorChange` journaled it): the
 * task's worktree is reaped as a live run's reap would, its unmerged work kept on its rescue ref
 * (lib/worktrees/settle.ts). The lines say what became of it; a failure keeps the worktree.
 */
export async function reapCancelled(root: string, task: Task): Promise<string[]> {
  if (task.status !== "CANCELLED" || !task.session_id) return [];
  try {
    const { lines } = await settleWorktrees(root, [task], {
      sessions: [task.session_id],
      liveSessions: () => liveAgentSessions(workspacePaths(root)),
    });
    return lines;
  } catch (e) {
    return [`${task.id}: worktree kept: ${(e as Error).message} (\`service run\` reaps it)`];
  }
}
