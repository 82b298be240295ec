import assert from "node:assert/strict";
import { Bounded } from "./bounded.ts";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => resolve = r);
  return { promise, resolve };
}

Deno.test("Bounded runs at most its limit at once, the rest in the order added", async () => {
  const pool = new Bounded(2);
  const gates = [deferred(), deferred(), deferred(), deferred()];
  const started: number[] = [];
  const done = gates.map((g, i) =>
    pool.run(async () => {
      started.push(i);
      await g.promise;
      return i;
    })
  );
  await Promise.resolve();
  assert.deepEqual(started, [0, 1]);
  gates[1].resolve();
  await done[1];
  await Promise.resolve();
  assert.deepEqual(started, [0, 1, 2]);
  gates[0].resolve();
  gates[2].resolve();
  gates[3].resolve();
  assert.deepEqual(await Promise.all(done), [0, 1, 2, 3]);
  assert.deepEqual(started, [0, 1, 2, 3]);
});

Deno.test("Bounded passes a failure to its caller and goes on; idle() waits for everything", async () => {
  const pool = new Bounded(1);
  let last = false;
  const failing = pool.run(() => Promise.reject(new Error("boom")));
  const after = pool.run(async () => {
    await new Promise((r) => setTimeout(r, 5));
    last = true;
  });
  await assert.rejects(failing, /boom/);
  await pool.idle();
  assert.equal(last, true);
  await after;
  await pool.idle(); // idle with nothing to wait for
});
