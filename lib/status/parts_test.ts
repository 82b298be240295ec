import assert from "node:assert/strict";
import type { Task } from "../tasks/task.ts";
import { stillWaiting } from "./parts.ts";

Deno.test("status drops the run state's wait of a task that has ended since (a run killed between its landing and the next tick)", () => {
  const task = (id: string, status: string) => ({ id, status }) as unknown as Task;
  const waiting = {
    landed: "capturing the diff",
    cancelled: "waiting for a slot",
    failed: "merging",
    queued: "waiting for a slot",
    running: "rebasing",
  };
  assert.deepEqual(
    stillWaiting(waiting, [
      task("landed", "CLOSED"),
      task("cancelled", "CANCELLED"),
      task("failed", "FAILED"),
      task("queued", "OPEN"),
      task("running", "IN_PROGRESS"),
    ]),
    { queued: "waiting for a slot", running: "rebasing" },
  );
  // A wait of a task the store does not list (another run's state) stays: nothing says it ended.
  assert.deepEqual(stillWaiting({ other: "x" }, []), { other: "x" });
});
