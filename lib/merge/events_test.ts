import assert from "node:assert/strict";
import { conflictVerdict, taskVerificationFailedEvent } from "./events.ts";

Deno.test("taskVerificationFailedEvent() keeps the failed checks with their output tail", () => {
  const event = taskVerificationFailedEvent("t1", {
    passed: false,
    commit: "abc",
    warnings: [],
    signals: [
      {
        kind: "path_exists",
        detail: "a.ts",
        passed: true,
        output_tail: "found a.ts",
        duration_ms: 1,
      },
      {
        kind: "test_passes",
        detail: "deno test",
        passed: false,
        output_tail: "x".repeat(5000),
        duration_ms: 9,
      },
    ],
  });
  assert.equal(event.type, "task_verification_failed");
  assert.deepEqual(event.data, {
    task_id: "t1",
    signals: [{ kind: "test_passes", detail: "deno test", output_tail: "x".repeat(2000) }],
  });
});

Deno.test("conflictVerdict() retries until the last attempt, then fails naming the files", () => {
  assert.equal(conflictVerdict(1, ["a.ts"]).action, "retry");
  assert.equal(conflictVerdict(2, ["a.ts"]).action, "retry");
  const last = conflictVerdict(3, ["a.ts", "b.ts"]);
  assert.equal(last.action, "fail");
  assert.match(last.reason, /a\.ts, b\.ts/);
});
