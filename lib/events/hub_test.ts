import assert from "node:assert/strict";
import { ActivityHub } from "./hub.ts";

Deno.test("ActivityHub.publish() reaches every subscriber until it unsubscribes", () => {
  const hub = new ActivityHub();
  const a: string[] = [];
  const b: string[] = [];
  const stopA = hub.subscribe((x) => a.push(`${x.kind}:${x.detail.run_id}`));
  hub.subscribe((x) => b.push(x.kind));
  hub.publish("journal_appended", { run_id: "r1" });
  stopA();
  hub.publish("task_status", { task_id: "t1" });
  assert.deepEqual(a, ["journal_appended:r1"]);
  assert.deepEqual(b, ["journal_appended", "task_status"]);
  assert.equal(hub.size, 1);
});

Deno.test("ActivityHub.publish() keeps delivering when one listener throws", () => {
  const hub = new ActivityHub();
  const seen: string[] = [];
  const original = console.error;
  console.error = () => {};
  try {
    hub.subscribe(() => {
      throw new Error("boom");
    });
    hub.subscribe((x) => seen.push(x.kind));
    hub.publish("task_status");
  } finally {
    console.error = original;
  }
  assert.deepEqual(seen, ["task_status"]);
});

Deno.test("ActivityHub.publish() rejects a kind that is not snake_case", () => {
  assert.throws(() => new ActivityHub().publish("Bad Kind"), RangeError);
});
