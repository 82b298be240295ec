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

/** A lane whose merges say when they are prepared and when they land, each on the test's word. */
function pipelinedLane() {
  const delivered: string[] = [];
  const trains: { ids: string[]; prepare: () => void; land: () => void }[] = [];
  const started = [deferred(), deferred(), deferred()];
  const l = new IntegrationLane<CoreEvent>({
    deliver: (events) => {
      for (const e of events) delivered.push(`${e.type}:${"taskId" in e ? e.taskId : ""}`);
    },
    fail: (m) => delivered.push(`failed:${m}`),
    verifications: 2,
    merge: async (ids, prepared) => {
      const prepare = deferred();
      const land = deferred();
      trains.push({ ids, prepare: prepare.resolve, land: land.resolve });
      started[trains.length - 1]?.resolve();
      await prepare.promise;
      prepared();
      await land.promise;
      return ids.map((taskId): CoreEvent => ({
        type: "merge_result",
        taskId,
        result: { kind: "merged", commit: `c-${taskId}` },
      }));
    },
  });
  return { l, delivered, trains, started: started.map((d) => d.promise) };
}

Deno.test("IntegrationLane: the next train starts once the landing one is prepared, and its results are delivered after that one's", async () => {
  const { l, delivered, trains, started } = pipelinedLane();
  l.merge("a");
  await started[0];
  l.merge("b");
  l.merge("c");
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(trains.length, 1, "nothing else starts before the first train is prepared");
  trains[0].prepare();
  await started[1];
  assert.deepEqual(trains.map((t) => t.ids), [["a"], ["b", "c"]]);
  l.merge("d");
  trains[1].prepare();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(trains.length, 2, "a third starts only once the first has landed");
  trains[1].land(); // the second is done first: its results still wait for the first's
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(delivered, []);
  trains[0].land();
  await started[2];
  assert.deepEqual(trains.map((t) => t.ids), [["a"], ["b", "c"], ["d"]]);
  trains[2].prepare();
  trains[2].land();
  await l.idle();
  assert.deepEqual(delivered, [
    "merge_result:a",
    "merge_result:b",
    "merge_result:c",
    "merge_result:d",
  ]);
});

Deno.test("IntegrationLane: a rebase waits until every train started before it has landed", async () => {
  const { l, delivered, trains, started } = pipelinedLane();
  let rebasing = false;
  l.merge("a");
  await started[0];
  l.rebase(() => {
    rebasing = true;
    return Promise.resolve([{ type: "rebase_result", taskId: "r", result: rebased }]);
  });
  trains[0].prepare();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(rebasing, false, "not while the train lands");
  trains[0].land();
  await l.idle();
  assert.deepEqual(delivered, ["merge_result:a", "rebase_result:r"]);
});
