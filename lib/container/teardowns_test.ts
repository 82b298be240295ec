import assert from "node:assert/strict";
import { teardownsDone, trackTeardown } from "./teardowns.ts";

Deno.test("teardownsDone: waits for every tracked runtime command, also one tracked meanwhile", async () => {
  const order: string[] = [];
  let second!: () => void;
  trackTeardown(
    new Promise<void>((r) =>
      setTimeout(() => {
        order.push("first");
        trackTeardown(new Promise<void>((r2) => second = r2).then(() => order.push("second")));
        r();
      }, 10)
    ),
  );
  const done = teardownsDone().then(() => order.push("done"));
  await new Promise((r) => setTimeout(r, 30));
  second();
  await done;
  assert.deepEqual(order, ["first", "second", "done"]);
});

Deno.test("teardownsDone: a runtime command that never exits holds it no longer than its limit", async () => {
  trackTeardown(new Promise(() => {}));
  const started = performance.now();
  await teardownsDone(50);
  assert.ok(performance.now() - started < 5_000);
});
