import assert from "node:assert/strict";
import * as ev from "./events.ts";
import { EVENT_TYPES, readEvent, readLine, readRow } from "./event_reader.ts";
import type { JournalEvent } from "./row.ts";

/** A row of every event type, as its one constructor writes it. */
const WRITTEN: JournalEvent[] = [
  ev.runStarted({
    run_id: "r",
    plan: "p",
    plan_file: "plans/p.yaml",
    planned: [{ task_id: "a", title: "A", role: "r", stage: "s", step_key: "k", depends_on: [] }],
    already_landed: [{ task_id: "b", run_id: "r0", commit: "c" }],
    done_by_operator: [{ task_id: "d", run_id: "r0" }],
  }),
  ev.runResumed({ run_id: "r", pid: 7 }),
  ev.runCompleted({ run_id: "r", status: "completed", counts: { merged: 1 } }),
  ev.taskClaimed({
    task_id: "a",
    session_id: "s",
    title: "A",
    role: "r",
    attempt: 1,
    model: "m",
    batch_eligible: true,
    isolation: "worktree",
    adapter: "claude",
    lane: "batch",
    worker: "w",
  }),
  ev.taskBatchSubmitted({ task_id: "a", provider: "anthropic", batch_id: "b", custom_id: "c" }),
  ev.taskBatchResult({ task_id: "a", batch_id: "b", outcome: "applied", reason: "ok" }),
  ev.taskVerificationFailed({ task_id: "a", signals: [{ kind: "k", detail: "d" }] }),
  ev.taskRetried({ task_id: "a", reason: "again" }),
  ev.taskCompleted({ task_id: "a", summary: "done", interrupted: true }),
  ev.taskMerged({ task_id: "a", commit: "c", pr: "https://example.test/1" }),
  ev.taskUnchanged({ task_id: "a" }),
  ev.taskFollowUp({
    task_id: "a",
    seq: 1,
    principal: "p",
    text: "use the v2 API",
    audit_event_hash: "h",
  }),
  ev.taskFilesKeptOut({ task_id: "a", paths: [".env"], paths_total: 1, rewritten_commits: 2 }),
  ev.taskMerged({ task_id: "e", commit: "c", empty: true }),
  ev.taskDiffCaptured({ task_id: "a", sha256: "sha256:00", added: 1, removed: 2, files: 3 }),
  ev.taskDiffCaptured({
    task_id: "a",
    sha256: "sha256:00",
    added: 0,
    removed: 0,
    files: 0,
    truncated: { bytes: 62_914_560, files: 1 },
  }),
  ev.taskReviewDecision({
    task_id: "a",
    decision: "merge",
    note: "n",
    principal: "alice",
    scope: "operator",
    projection_hash: "p",
    journal_head: "h",
    diff_sha256: null,
    audit_event_hash: "e",
  }),
  ev.taskFailed({ task_id: "a", reason: "r", files: ["x"] }),
  ev.agentExited({
    task_id: "a",
    session_id: "s",
    exit_code: 1,
    duration_ms: 5,
    ended_by: "stop",
    worker: "w",
    commit: null,
    push_error: "p",
    start_failure: "binary not found",
    interrupted: "stop",
  }),
  ev.mergeConflict({ task_id: "a", files: ["x"], attempt: 2 }),
  ev.budgetExceeded({ total_micro_usd: 1, budget_micro_usd: 2, estimate_micro_usd: 3 }),
  ev.rateLimited({
    task_id: "a",
    session_id: "s",
    adapter: "claude",
    rule: "429",
    line: "x",
    until: 9,
    reset_named: true,
  }),
  ev.taskCancelled({ task_id: "a", reason: "r" }),
  ev.taskDoneByOperator({ task_id: "a", reason: "r" }),
  ev.taskWaiting({ task_id: "a", reason: "r" }),
  ev.taskProtectedPaths({ task_id: "a", paths: [".github/workflows/ci.yml"], error: "e" }),
  ev.taskOversizedFiles({
    task_id: "a",
    files: [{ path: "dump.sql", bytes: 62_914_560 }],
    files_total: 201,
    limit_bytes: 10_485_760,
  }),
  ev.taskOwnedFilesExceeded({ task_id: "a", paths: ["x"], owned_files: ["y"], enforced: true }),
  ev.taskRebased({ task_id: "a", onto: "c", head: "h", diff_changed: true }),
  ev.taskLogCaptured({ task_id: "a", session_id: "s", sha256: "sha256:00", bytes: 3 }),
  ev.taskWorktreePrepared({
    task_id: "a",
    session_id: "s",
    copied: [".env"],
    linked: ["node_modules"],
    setup: [{ command: "npm ci", exit_code: 0, ms: 5 }],
    ports: [20000],
  }),
  ev.taskVerificationRecorded({
    task_id: "a",
    session_id: "s",
    tests_run: true,
    quality_gates_run: false,
    completion_signals_checked: true,
    verified: true,
    test_runs: [{ runner: "deno", outcome: "passed", line: "ok | 1 passed" }],
  }),
  ev.taskEvidenceSealed({ task_id: "a", bundle_hash: "b", audit_event_hash: "e" }),
  ev.taskEvidenceUnsealed({ task_id: "a", reason: "r" }),
  ev.taskPrOpened({ task_id: "a", number: 1, url: "u", head_sha: "h", branch: "b", base: "m" }),
  ev.taskPrUpdated({ task_id: "a", number: 1, head_sha: "h", reason: "r" }),
  ev.taskPrClosed({ task_id: "a", number: 1, reason: "r", by: "u" }),
  ev.taskPrCheckRerun({
    task_id: "a",
    number: 1,
    head_sha: "h",
    check: "ci/test",
    rerun: 1,
    of: 1,
    summary: "flaky",
  }),
  ev.taskPrStatus({
    task_id: "a",
    number: 1,
    state: "open",
    head_sha: "h",
    checks: [{ name: "ci", state: "success", required: true, url: "u" }],
    reviews: [{ user: "u", state: "approved" }],
    waits_for: "w",
  }),
  ev.taskTicketMoved({
    task_id: "a",
    tracker: "tracker_a",
    ref: "PROJ-1",
    event: "claimed",
    to: "In Progress",
    outcome: "moved",
    state: "In Progress",
    detail: "PROJ-1 moved to In Progress for a",
  }),
];

/** `value` without its undefined-valued keys (the reader writes absent optional fields so). */
function defined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(defined);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).filter(([, v]) => v !== undefined).map(([k, v]) => [k, defined(v)]),
  );
}

Deno.test("readEvent() reads back every field of a row each constructor writes", () => {
  assert.deepEqual(
    [...new Set(WRITTEN.map((e) => e.type))].sort(),
    [...EVENT_TYPES].sort(),
    "a constructor and a reader per event type",
  );
  for (const row of WRITTEN) {
    const read = readEvent(row);
    assert.ok(read, `${row.type} counts`);
    const { type, ...fields } = defined(read) as Record<string, unknown>;
    assert.equal(type, row.type);
    const data = { ...row.data };
    if (type === "run_started" || type === "run_completed") {
      assert.deepEqual(fields.data, row.data, `${type}: its data verbatim`);
      delete fields.data;
      delete data.counts; // the run's end counts are shown by nobody: not read
    }
    if (type === "task_worktree_prepared") delete data.copied_total;
    assert.deepEqual(fields, data, `${type} reads back what was written`);
  }
});

Deno.test("readRow() says why a row of a known type counts for nothing", () => {
  const cases: [JournalEvent, string][] = [
    [{ type: "task_claimed", data: null as never }, "`data` is not an object"],
    [{ type: "task_claimed", data: [] as never }, "`data` is not an object"],
    [{ type: "task_claimed", data: {} }, "`task_id` missing"],
    [{ type: "task_merged", data: { task_id: 7 } }, "`task_id` is an integer, not a string"],
    [{ type: "task_merged", data: { task_id: 1.5 } }, "`task_id` is a number, not a string"],
    [{ type: "task_retried", data: { task_id: null } }, "`task_id` is null, not a string"],
    [
      { type: "task_review_decision", data: { task_id: "t", decision: "merge" } },
      "`principal` missing",
    ],
    [
      { type: "task_review_decision", data: { task_id: "t", decision: "yes", principal: "p" } },
      '`decision` "yes" is not approve, request_changes or merge',
    ],
    [
      { type: "task_review_decision", data: { task_id: "t", decision: 1, principal: "p" } },
      "`decision` is an integer, not a string",
    ],
    [
      { type: "task_diff_captured", data: { task_id: "t", sha256: "s", added: "1" } },
      "`added` is a string, not an integer",
    ],
    [
      { type: "run_started", data: { run_id: "r", x: 0.5 } },
      "`data` holds a value with no canonical form (a non-integer number)",
    ],
    [
      { type: "task_pr_closed", data: { task_id: "t", number: "1" } },
      "`number` is a string, not an integer",
    ],
    [{ type: "agent_exited", data: { task_id: "t" } }, "`session_id` missing"],
  ];
  for (const [row, reason] of cases) {
    const read = readRow(row);
    assert.ok(read && !("type" in read), `${JSON.stringify(row)} counts for nothing`);
    assert.equal(read.reason, reason);
    assert.equal(read.malformed, row.type);
    assert.equal(readEvent(row), undefined);
  }
  assert.equal(
    (readRow({ type: "task_review_decision", data: { task_id: "t" } }) as { task_id?: string })
      .task_id,
    "t",
    "a malformed row still names its task when it can",
  );
});

Deno.test("readRow() leaves unknown types alone and reads optional fields of the wrong type as absent", () => {
  assert.equal(readRow({ type: "agent_heartbeat", data: { task_id: "t" } }), undefined);
  assert.equal(readRow({ type: "constructor", data: {} }), undefined);
  assert.equal(readRow({ type: "__proto__", data: {} }), undefined);
  assert.deepEqual(
    defined(readEvent({ type: "task_claimed", data: { task_id: "t", title: 5, role: null } })),
    { type: "task_claimed", task_id: "t" },
  );
  assert.deepEqual(
    defined(readEvent({
      type: "run_started",
      data: { planned: [{ title: "no id" }, "x", { task_id: "a", depends_on: ["b", 3] }] },
    })),
    {
      type: "run_started",
      data: { planned: [{ title: "no id" }, "x", { task_id: "a", depends_on: ["b", 3] }] },
      planned: [{ task_id: "a", depends_on: ["b"] }],
      already_landed: [],
      done_by_operator: [],
    },
  );
  const signals = readEvent({
    type: "task_verification_failed",
    data: { task_id: "t", signals: 1 },
  });
  assert.deepEqual(defined(signals), { type: "task_verification_failed", task_id: "t" });
});

Deno.test("readLine() reads a journal line, and nothing of a torn or foreign one", () => {
  assert.deepEqual(
    defined(readLine('{"data":{"task_id":"t"},"type":"task_completed"}')),
    { type: "task_completed", task_id: "t" },
  );
  for (const line of ['{"data":{"task_id":"t"},"type":"task_comp', "[1]", "null", '{"type":1}']) {
    assert.equal(readLine(line), undefined, line);
  }
});
