/**
 * What the run's agents need of the run's task work (lib/integration/task_work.ts): the tip a
 * worktree is cut from, where each task's work is, and what an agent that ended left.
 */
import type { Task } from "../tasks/task.ts";
import type { Worktree } from "../worktrees/worktrees.ts";

/** Where a task's work is. */
export interface WorkHandle {
  worktree: Worktree;
  sessionId: string;
  logPath: string;
  /** The task's role (its worktree environment's teardown). */
  role: string;
  /** The agent's environment, when this process started it (the teardown runs with it). */
  env?: Record<string, string>;
  /**
   * Adopted with work the target already holds (a merge a killed process completed): its base is
   * not known from git, so its landing takes it as landed, never as an empty diff (`unchanged`).
   */
  landedBefore?: boolean;
}

/** The task work as an agent lane uses it. */
export interface AgentWork {
  /** The target branch's tip: a new worktree is cut from it. */
  targetTip(): Promise<string>;
  /** Remember where `taskId`'s work is. */
  set(taskId: string, handle: WorkHandle): void;
  /**
   * Commit what the agent left uncommitted; whether its branch holds work beyond its base, and
   * what git said when a full disk failed the commit (the work then stays uncommitted).
   */
  keepLeftovers(
    taskId: string,
    reason: string,
  ): Promise<{ hasWork: boolean; diskFull?: { said: string; where: string } }>;
  /** Whether the task has completion signals and every one passes on its work. */
  signalsPass(task: Task): Promise<boolean>;
}
