/**
 * What the batch lane (lane.ts) tells the run loop and what it needs of the run's task work:
 * the loop's decision core takes these events as they are (core/on_batch.ts).
 */
import type { Worktree } from "../worktrees/worktrees.ts";
import type { BatchOutcome } from "../journal/events.ts";
import type { ClaimLost } from "../agent_session/events.ts";

/** The task's request went to a provider's batch API (the task is claimed for it). */
export interface BatchSubmitted {
  type: "batch_submitted";
  taskId: string;
  sessionId: string;
  provider: string;
  /** The adapter whose provider it is. */
  adapter: string;
  batchId: string;
  customId: string;
  startedAt: number;
  attempt: number;
  model: string;
}

/** A request submitted before this process started is polled again (after a stop or crash). */
export interface BatchAdopted {
  type: "batch_adopted";
  taskId: string;
  sessionId: string;
  batchId: string;
  startedAt: number;
}

/**
 * What came of a task's batch request: `applied` — its patch is committed in the task's
 * worktree and the task is DONE; anything else — it goes to the agent CLI in real time.
 */
export interface BatchResult {
  type: "batch_result";
  taskId: string;
  sessionId?: string;
  batchId?: string;
  outcome: BatchOutcome;
  reason?: string;
}

/** An event of the batch lane, for the run loop's decision core. */
export type BatchLaneEvent = BatchSubmitted | BatchAdopted | BatchResult | ClaimLost;

/** What the lane needs of the run's task work (lib/integration/task_work.ts). */
export interface BatchWork {
  /** The target branch's tip: a request shows the files at this commit. */
  targetTip(): Promise<string>;
  /** Remember where a task's patched worktree is (its gates and capture run there). */
  set(
    taskId: string,
    handle: { worktree: Worktree; sessionId: string; logPath: string; role: string },
  ): void;
  /** Remove a task's worktree once its patch did not apply. */
  reap(taskId: string): Promise<void>;
}
