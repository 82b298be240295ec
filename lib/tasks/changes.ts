/** A small hook that publishes task status changes (the live board subscribes to it). */
import type { TaskStatus } from "./lifecycle.ts";
import type { Task } from "./task.ts";

/** One change: the task after it, and its status before (null for a creation). */
export interface TaskChange {
  task: Task;
  from: TaskStatus | null;
  to: TaskStatus;
  workspace: string;
}

/** A subscriber. Exceptions it throws are logged and ignored. */
export type TaskChangeListener = (change: TaskChange) => void;

const listeners = new Set<TaskChangeListener>();

/** Subscribe to task changes; returns the unsubscribe function. */
export function onTaskChange(listener: TaskChangeListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Publish a change to every subscriber. */
export function emitTaskChange(change: TaskChange): void {
  for (const listener of listeners) {
    try {
      listener(change);
    } catch (e) {
      console.error(`task change listener failed: ${(e as Error).message}`);
    }
  }
}
