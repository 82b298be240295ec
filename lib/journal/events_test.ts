import assert from "node:assert/strict";
import * as ev from "./events.ts";
import { encodeRow } from "./row.ts";
import { ZERO_HASH } from "./hash.ts";

Deno.test("event constructors leave out absent keys instead of writing null or undefined", () => {
  assert.deepEqual(ev.taskClaimed({ task_id: "t1", session_id: "s1", batch_eligible: false }), {
    type: "task_claimed",
    data: { task_id: "t1", session_id: "s1" },
  });
  assert.deepEqual(ev.taskCompleted({ task_id: "t1", recovered: false }).data, { task_id: "t1" });
  assert.deepEqual(ev.taskCompleted({ task_id: "t1", recovered: true }).data, {
    task_id: "t1",
    recovered: true,
  });
  assert.deepEqual(
    ev.taskVerificationFailed({
      task_id: "t1",
      signals: [{ kind: "agent_failed", detail: "exit 3", output_tail: undefined }],
    }).data,
    { task_id: "t1", signals: [{ kind: "agent_failed", detail: "exit 3" }] },
  );
});

Deno.test("every constructor builds a row the one encoder accepts", () => {
  const events = [
    ev.runStarted({ run_id: "r1", plan: "p", tasks: 1 }),
    ev.runResumed({ run_id: "r1", pid: 1 }),
    ev.runCompleted({ run_id: "r1", status: "failed" }),
    ev.taskClaimed({ task_id: "t", session_id: "s", title: "T", role: "backend", attempt: 1 }),
    ev.taskVerificationFailed({ task_id: "t", signals: [{ kind: "k", detail: "d" }] }),
    ev.taskRetried({ task_id: "t", reason: "again" }),
    ev.taskCompleted({ task_id: "t", summary: "done" }),
    ev.taskMerged({ task_id: "t", commit: "abc" }),
    ev.taskDiffCaptured({ task_id: "t", sha256: "sha256:00", added: 1, removed: 0, files: 1 }),
    ev.taskFailed({ task_id: "t", reason: "r" }),
    ev.agentExited({ task_id: "t", session_id: "s", exit_code: 1, duration_ms: 5 }),
    ev.mergeConflict({ task_id: "t", files: ["a"], attempt: 1 }),
    ev.budgetExceeded({ total_micro_usd: 1, budget_micro_usd: 2, estimate_micro_usd: 3 }),
    ev.rateLimited({
      task_id: "t",
      session_id: "s",
      adapter: "claude",
      rule: "429",
      line: "x",
      until: 9,
    }),
    ev.taskProtectedPaths({ task_id: "t", paths: ["service.yaml"] }),
    ev.taskOwnedFilesExceeded({
      task_id: "t",
      paths: ["b.txt"],
      owned_files: ["a.txt"],
      enforced: false,
    }),
  ];
  for (const [seq, e] of events.entries()) {
    assert.doesNotThrow(
      () => encodeRow(e, { prev: ZERO_HASH, seq, ts: "2026-11-23T00:00:00.000Z" }),
      e.type,
    );
  }
});
