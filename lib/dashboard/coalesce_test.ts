import assert from "node:assert/strict";
import { coalesce } from "./coalesce.ts";

Deno.test("coalesce() runs a burst of triggers as one run plus one follow-up", async () => {
  let runs = 0;
  let release!: () => void;
  const refresh = coalesce(() => {
    runs++;
    return new Promise<void>((resolve) => release = resolve);
  });
  refresh();
  for (let i = 0; i < 10; i++) refresh();
  assert.equal(runs, 1);
  release();
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(runs, 2);
  release();
  await refresh.idle();
  assert.equal(runs, 2);
});

Deno.test("coalesce() keeps working after the task fails", async () => {
  const errors: unknown[] = [];
  let calls = 0;
  const refresh = coalesce(() => {
    calls++;
    return calls === 1 ? Promise.reject(new Error("offline")) : Promise.resolve();
  }, (e) => errors.push(e));
  refresh();
  await refresh.idle();
  refresh();
  await refresh.idle();
  assert.equal(calls, 2);
  assert.equal(errors.length, 1);
});
