import assert from "node:assert/strict";
import type { CoreEvent } from "../orchestrator/core/protocol.ts";
import { IntegrationLane } from "./lane.ts";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

/** A lane whose merges record their trains and wait for `hold` before answering. */
function lane(verifications = 2) {
  const delivered: string[] = [];
  const trains: string[][] = [];
  let hold = deferred();
  const l = new IntegrationLane<CoreEvent>({
    deliver: (events) => {
      for (const e of events) delivered.push(`${e.type}:${"taskId" in e ? e.taskId : ""}`);
    },
    fail: (m) => delivered.push(`failed:${m}`),
    verifications,
    merge: async (ids) => {
      trains.push(ids);
      await hold.promise;
      hold = deferred();
      return ids.map((taskId): CoreEvent => ({
        type: "merge_result",
        taskId,
        result: { kind: "merged", commit: `c-${taskId}` },
      }));
    },
  });
  return { l, delivered, trains, release: () => hold.resolve() };
}

Deno.test("IntegrationLane: merges asked for while one lands land next as one train, in order", async () => {
  const { l, delivered, trains, release } = lane();
  l.merge("a");
  await Promise.resolve();
  l.merge("b");
  l.rebase(() => Promise.resolve([{ type: "rebase_result", taskId: "r", result: rebased }]));
  l.merge("c");
  release();
  await new Promise((r) => setTimeout(r, 0));
  release();
  await l.idle();
  assert.deepEqual(trains, [["a"], ["b", "c"]]);
  assert.deepEqual(delivered, [
    "merge_result:a",
    "merge_result:b",
    "merge_result:c",
    "rebase_result:r",
  ]);
});

Deno.test("IntegrationLane: verifications run side by side up to their bound, beside a landing", async () => {
  const { l, delivered, release } = lane(2);
  const gates = [deferred(), deferred(), deferred()];
  let running = 0;
  let most = 0;
  l.merge("m");
  for (const [i, gate] of gates.entries()) {
    l.verify(async () => {
      most = Math.max(most, ++running);
      await gate.promise;
      running--;
      return [{ type: "captured", taskId: `v${i}` }];
    });
  }
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(most, 2);
  for (const gate of gates) gate.resolve();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(delivered.filter((d) => d.startsWith("captured")).length, 3);
  assert.ok(!delivered.includes("merge_result:m"), "the merge still lands on its own time");
  release();
  await l.idle();
  assert.ok(delivered.includes("merge_result:m"));
});

const rebased = { kind: "rebased" as const, tip: "t", onto: "0b5", diffChanged: false };
