/**
 * Orphans (spec §3.1): a task whose agent ended without reporting keeps its partial work. When
 * the agent's branch holds work, the task is recovered to DONE and lands through its gates like
 * any completion; otherwise it is requeued (with a note for the next attempt) until its
 * attempts are spent, then FAILED. After a crash of the orchestrator itself, every task still
 * claimed is such an orphan.
 */
import * as ev from "../journal/events.ts";
import type { JournalEvent } from "../journal/row.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import type { Worktree } from "../worktrees/worktrees.ts";
import type { Lander } from "./lander.ts";

/** What recovery acts through. */
export interface RecoveryContext {
  store: TaskStore;
  lander: Lander;
  maxAttempts: number;
  journal: (event: JournalEvent) => Promise<void>;
  log: (line: string) => void;
  /** Notes for the next attempt's prompt, by task id. */
  retryNotes: Map<string, string>;
}

/** Recover an ORPHANED task: land its partial work, or requeue or fail it. */
export async function recoverOrphan(
  ctx: RecoveryContext,
  task: Task,
  worktree: Worktree,
  reason: string,
): Promise<void> {
  if (await ctx.lander.commitLeftovers(worktree, task, reason)) {
    await ctx.store.recoverDone(task.id);
    ctx.log(`${task.id}: recovered partial work; landing it through the gates`);
    await ctx.lander.land(ctx.store.require(task.id), worktree, { recovered: true });
    return;
  }
  await ctx.lander.reap(worktree, task);
  await requeueOrFail(ctx, task, reason);
}

/** Requeue an ORPHANED task for another attempt, or FAIL it when its attempts are spent. */
export async function requeueOrFail(
  ctx: RecoveryContext,
  task: Task,
  reason: string,
): Promise<void> {
  const current = ctx.store.require(task.id);
  if (current.attempts >= ctx.maxAttempts) {
    await ctx.store.giveUp(task.id, `${reason} (after ${current.attempts} attempts)`);
    await ctx.journal(ev.taskFailed({ task_id: task.id, reason }));
    ctx.log(`${task.id}: FAILED after ${current.attempts} attempts: ${reason}`);
    return;
  }
  await ctx.store.requeue(task.id, { reason });
  ctx.retryNotes.set(task.id, reason);
  await ctx.journal(ev.taskRetried({ task_id: task.id, reason }));
}

/** Recover the tasks of `tasks` that an earlier orchestrator left claimed (it crashed or was killed). */
export async function recoverInterrupted(ctx: RecoveryContext, tasks: Task[]): Promise<void> {
  const reason = "its agent was lost when the orchestrator stopped";
  for (const task of tasks) {
    if (task.status !== "CLAIMED" && task.status !== "IN_PROGRESS" && task.status !== "ORPHANED") {
      continue;
    }
    if (task.status !== "ORPHANED") await ctx.store.orphan(task.id, reason);
    const worktree = task.session_id
      ? await ctx.lander.existingWorktree(task.session_id)
      : undefined;
    if (!worktree) {
      await requeueOrFail(ctx, task, reason);
      continue;
    }
    ctx.log(`${task.id}: recovering session ${task.session_id} of the interrupted run`);
    await recoverOrphan(ctx, task, worktree, reason);
  }
}
