import assert from "node:assert/strict";
import { taskVerificationFailedEvent } from "./events.ts";

Deno.test("taskVerificationFailedEvent() keeps the failed checks with their output tail", () => {
  const event = taskVerificationFailedEvent("t1", {
    passed: false,
    commit: "abc",
    warnings: [],
    producers: [],
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
