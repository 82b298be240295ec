import assert from "node:assert/strict";
import {
  parseStatusQuery,
  STATUSES,
  type TaskStatus,
  type TaskTrigger,
  transition,
  TRIGGERS,
} from "./lifecycle.ts";

/** Every allowed transition; every other (status, trigger) pair must be refused. */
const ALLOWED: [TaskStatus, TaskTrigger, TaskStatus][] = [
  ["OPEN", "claim", "CLAIMED"],
  ["CLAIMED", "heartbeat", "IN_PROGRESS"],
  ["IN_PROGRESS", "heartbeat", "IN_PROGRESS"],
  ["CLAIMED", "complete", "DONE"],
  ["IN_PROGRESS", "complete", "DONE"],
  ["OPEN", "operator_complete", "DONE"],
  ["BLOCKED", "operator_complete", "DONE"],
  ["CLAIMED", "operator_complete", "DONE"],
  ["IN_PROGRESS", "operator_complete", "DONE"],
  ["ORPHANED", "operator_complete", "DONE"],
  ["CLAIMED", "fail", "FAILED"],
  ["IN_PROGRESS", "fail", "FAILED"],
  ["OPEN", "cancel", "CANCELLED"],
  ["BLOCKED", "cancel", "CANCELLED"],
  ["CLAIMED", "cancel", "CANCELLED"],
  ["IN_PROGRESS", "cancel", "CANCELLED"],
  ["ORPHANED", "cancel", "CANCELLED"],
  ["CLAIMED", "orphan", "ORPHANED"],
  ["IN_PROGRESS", "orphan", "ORPHANED"],
  ["ORPHANED", "reopen", "OPEN"],
  ["ORPHANED", "requeue", "OPEN"],
  ["ORPHANED", "recover_done", "DONE"],
  ["BLOCKED", "unblock", "OPEN"],
  ["DONE", "merge_succeeded", "CLOSED"],
  ["DONE", "merge_failed", "FAILED"],
  ["DONE", "retry", "OPEN"],
  ["ORPHANED", "give_up", "FAILED"],
  ["DONE", "cancel", "CANCELLED"],
  ["FAILED", "cancel", "CANCELLED"],
  ["FAILED", "operator_retry", "OPEN"],
  ["CANCELLED", "operator_retry", "OPEN"],
  ["OPEN", "reblock", "BLOCKED"],
  ...STATUSES.filter((s) => s !== "CLOSED").map((s) =>
    [s, "journal_merged", "CLOSED"] as [TaskStatus, TaskTrigger, TaskStatus]
  ),
];

for (const from of STATUSES) {
  for (const trigger of TRIGGERS) {
    const expected = ALLOWED.find(([f, t]) => f === from && t === trigger)?.[2];
    const name = expected
      ? `transition() moves ${from} on ${trigger} to ${expected}`
      : `transition() refuses ${trigger} on ${from}`;
    Deno.test(name, () => {
      const result = transition(from, trigger);
      if (expected) assert.deepEqual(result, { ok: true, to: expected });
      else {
        assert.equal(result.ok, false);
        if (!result.ok) assert.match(result.reason, new RegExp(`a ${from} task`));
      }
    });
  }
}

Deno.test("parseStatusQuery() takes the lower-case forms and refuses others", () => {
  assert.equal(parseStatusQuery("open"), "OPEN");
  assert.equal(parseStatusQuery("in_progress"), "IN_PROGRESS");
  assert.equal(parseStatusQuery("orphaned"), "ORPHANED");
  assert.equal(parseStatusQuery("nope"), undefined);
  assert.equal(parseStatusQuery(""), undefined);
});
