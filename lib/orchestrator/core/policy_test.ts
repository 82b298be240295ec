import assert from "node:assert/strict";
import { afterFailure, MAX_ATTEMPTS } from "./policy.ts";

Deno.test("afterFailure() retries until the attempts are spent, then fails naming the count", () => {
  const table: [number, boolean, "retry" | "fail", RegExp][] = [
    [1, true, "retry", /\(failed attempt 1 of 3; retrying\)/],
    [2, true, "retry", /\(failed attempt 2 of 3; retrying\)/],
    [3, true, "fail", /after 3 failed attempts/],
    [7, true, "fail", /after 7 failed attempts/],
    [1, false, "fail", /not retried/],
    [2, false, "fail", /not retried/],
  ];
  for (const [attempts, retryable, action, reason] of table) {
    const verdict = afterFailure({ attempts, retryable, reason: "agent exited (exit 3)" });
    assert.equal(verdict.action, action, `${attempts} ${retryable}`);
    assert.match(verdict.reason, /^agent exited \(exit 3\)/);
    assert.match(verdict.reason, reason);
  }
  assert.equal(MAX_ATTEMPTS, 3);
  assert.equal(afterFailure({ attempts: 1, retryable: true, reason: "x" }, 1).action, "fail");
});
