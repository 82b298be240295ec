import assert from "node:assert/strict";
import { LatestWrite } from "./latest_write.ts";

/** A write that records its values and lets the test wait for the n-th one. */
function recorder() {
  const written: number[] = [];
  const waiters: { n: number; done: () => void }[] = [];
  const write = async (v: number) => {
    await Promise.resolve();
    written.push(v);
    for (const w of waiters.filter((w) => written.length >= w.n)) w.done();
  };
  const nth = (n: number) =>
    new Promise<void>((done) => written.length >= n ? done() : waiters.push({ n, done }));
  return { written, write, nth };
}

Deno.test("LatestWrite writes a burst of changes as the first and the latest value, one interval apart", async () => {
  const r = recorder();
  const w = new LatestWrite(r.write, 50);
  const t0 = performance.now();
  for (let i = 0; i < 100; i++) w.set(i);
  await r.nth(2);
  assert.deepEqual(r.written, [0, 99]);
  assert.ok(performance.now() - t0 >= 45, "the second write waited for the interval");
  w.set(100);
  await r.nth(3);
  assert.deepEqual(r.written, [0, 99, 100]);
  await w.stop();
});

Deno.test("LatestWrite.stop() waits for the write in progress and drops what was not written yet", async () => {
  let release!: () => void;
  const started: number[] = [];
  const w = new LatestWrite<number>((v) => {
    started.push(v);
    return new Promise<void>((r) => release = r);
  }, 60_000);
  w.set(1);
  w.set(2); // waits for the interval: dropped by stop()
  let stopped = false;
  const stopping = w.stop().then(() => stopped = true);
  await Promise.resolve();
  assert.equal(stopped, false, "stop() waits for the write in progress");
  release();
  await stopping;
  w.set(3); // after stop: ignored
  assert.deepEqual(started, [1]);
});

Deno.test("LatestWrite goes on after a write fails", async () => {
  const r = recorder();
  let first = true;
  const w = new LatestWrite<number>((v) => {
    if (first) {
      first = false;
      return Promise.reject(new Error("disk full"));
    }
    return r.write(v);
  }, 10);
  w.set(1);
  w.set(2);
  await r.nth(1);
  assert.deepEqual(r.written, [2]);
  await w.stop();
});
