import assert from "node:assert/strict";
import { taskVerificationFailed } from "../journal/events.ts";
import { failedSignals } from "./events.ts";

Deno.test("failedSignals() keeps the failed checks with their output tail for the gate receipt", () => {
  const signals = failedSignals({
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
  const event = taskVerificationFailed({ task_id: "t1", signals });
  assert.equal(event.type, "task_verification_failed");
  assert.deepEqual(event.data, {
    task_id: "t1",
    signals: [{ kind: "test_passes", detail: "deno test", output_tail: "x".repeat(2000) }],
  });
});
