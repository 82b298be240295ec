/**
 * A status change the decision core asks of the task store (core/protocol.ts `StoreChange`),
 * carried out by the one store method that makes it.
 */
import type { TaskStore } from "../tasks/store.ts";
import type { StoreChange } from "./core/protocol.ts";
import { crashPoint } from "../util/crash_points.ts";

/** Apply `change` to `store`; throws when the task moved meanwhile (the transition is refused). */
export async function applyStoreChange(store: TaskStore, change: StoreChange): Promise<void> {
  switch (change.op) {
    case "orphan":
      await store.orphan(change.taskId, change.reason);
      return;
    case "requeue":
      await store.requeue(change.taskId, {
        reason: change.reason,
        countAttempt: change.countAttempt,
        resumeFrom: change.resumeFrom,
      });
      return;
    case "give_up":
      await store.giveUp(change.taskId, change.reason);
      return;
    case "merge_failed":
      await store.markMergeFailed(change.taskId, change.reason);
      return;
    case "recover_done":
      await store.recoverDone(change.taskId);
      return;
    case "cancel":
      await store.cancel(change.taskId, change.reason);
      return;
    case "unchanged":
      // Nothing to land: the task is finished all the same (DONE → CLOSED).
      await store.markMerged(change.taskId);
      return;
    case "merged":
      // The run loop asks only once `task_merged` is durable (orchestrator.ts, the store action).
      await crashPoint("merge.journaled");
      // Cancelled while its merge was landing: landed all the same, as the journal says.
      if (store.get(change.taskId)?.status === "CANCELLED") {
        await store.closeLandedPerJournal(change.taskId);
      } else await store.markMerged(change.taskId);
      await crashPoint("merge.store_closed");
      return;
  }
}
