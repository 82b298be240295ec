import assert from "node:assert/strict";
import type { JsonValue } from "../journal/canonical_json.ts";
import type { JournalRow } from "../journal/row.ts";
import { foldActivity, initialActivity, nextAttemptNumber, outline } from "./activity.ts";

function row(type: string, data: Record<string, JsonValue>, seq = 0): JournalRow {
  return { type, data, seq, v: 1, ts: "", prev: "", hash: "" } as JournalRow;
}

function fold(rows: [string, Record<string, JsonValue>][]) {
  const state = initialActivity();
  rows.forEach(([type, data], seq) => foldActivity(state, row(type, data, seq), seq));
  return state;
}

const PLAN: [string, Record<string, JsonValue>] = ["run_started", {
  run_id: "r",
  planned: [
    { task_id: "a", title: "A", role: "dev", depends_on: [] },
    { task_id: "b", title: "B", role: "dev", depends_on: ["a"] },
    { task_id: "c", title: "C", role: "dev", depends_on: ["b"] },
    { task_id: "d", title: "D", role: "dev", depends_on: ["old"] },
  ],
  already_landed: [{ task_id: "old", run_id: "r0", commit: "abc" }],
}];

Deno.test("outline: planned tasks not started are shown, blocked on what has not landed", () => {
  const rows = outline(fold([PLAN]));
  assert.deepEqual(rows.map((t) => [t.task_id, t.state, t.reason]), [
    ["a", "planned", undefined],
    ["b", "blocked", "waits on a (planned)"],
    ["c", "blocked", "waits on b (planned)"],
    ["d", "planned", undefined], // its dependency landed in an earlier run
  ]);
});

const cases: {
  name: string;
  rows: [string, Record<string, JsonValue>][];
  task: string;
  state: string;
  reason?: string;
  outcomes: string[];
}[] = [
  {
    name: "agent failure then a new attempt that completes",
    rows: [
      ["task_claimed", { task_id: "a", session_id: "s1" }],
      ["task_verification_failed", {
        task_id: "a",
        signals: [{ kind: "agent_failed", detail: "exit 3" }],
      }],
      ["task_retried", { task_id: "a", reason: "agent failed: exit 3" }],
      ["task_claimed", { task_id: "a", session_id: "s2" }],
      ["task_completed", { task_id: "a", summary: "did it" }],
    ],
    task: "a",
    state: "needs_review",
    outcomes: ["gated", "completed"],
  },
  {
    name: "merge conflict, attempts used up: FAILED with the files",
    rows: [
      ["task_claimed", { task_id: "a", session_id: "s1" }],
      ["task_completed", { task_id: "a" }],
      ["merge_conflict", { task_id: "a", files: ["x.py"], attempt: 1 }],
      ["task_verification_failed", {
        task_id: "a",
        signals: [{ kind: "merge_conflict", detail: "x.py" }],
      }],
      ["task_failed", { task_id: "a", reason: "merge conflict in x.py", files: ["x.py"] }],
    ],
    task: "a",
    state: "failed",
    reason: "merge conflict in x.py",
    outcomes: ["gated"],
  },
  {
    name: "a dependent of a failed task is blocked with the journaled reason",
    rows: [
      ["task_claimed", { task_id: "a", session_id: "s1" }],
      ["task_failed", { task_id: "a", reason: "gave up" }],
      ["task_waiting", { task_id: "b", reason: "blocked: waits on a, which FAILED" }],
    ],
    task: "b",
    state: "blocked",
    reason: "blocked: waits on a, which FAILED",
    outcomes: [],
  },
  {
    name: "cancel of a running task",
    rows: [
      ["task_claimed", { task_id: "a", session_id: "s1" }],
      ["task_cancelled", { task_id: "a", reason: "operator" }],
    ],
    task: "a",
    state: "cancelled",
    reason: "operator",
    outcomes: ["cancelled"],
  },
  {
    name: "a merge that does not land moves the task out of merged",
    rows: [
      ["task_claimed", { task_id: "a", session_id: "s1" }],
      ["task_completed", { task_id: "a" }],
      ["task_review_decision", { task_id: "a", decision: "merge" }],
      ["task_verification_failed", {
        task_id: "a",
        signals: [{ kind: "merge_conflict", detail: "x.py" }],
      }],
    ],
    task: "a",
    state: "gated",
    reason: "merge_conflict: x.py",
    outcomes: ["gated"],
  },
  {
    name: "hostile data: wrong types are ignored, never thrown on",
    rows: [
      ["run_started", { planned: "nope" as unknown as JsonValue }],
      ["run_started", { planned: [null, 3, { task_id: 5 }, { task_id: "a", depends_on: "x" }] }],
      ["task_claimed", { task_id: "a", session_id: 7 as unknown as JsonValue }],
      ["task_verification_failed", {
        task_id: "a",
        signals: [null, "x", { kind: "k", detail: 1 }],
      }],
      ["agent_exited", { task_id: "a", session_id: "", exit_code: "3" as unknown as JsonValue }],
    ],
    task: "a",
    state: "gated",
    reason: "k: 1",
    outcomes: ["gated"],
  },
];

for (const c of cases) {
  Deno.test(`activity: ${c.name}`, () => {
    const state = fold(c.rows);
    const t = outline(state).find((x) => x.task_id === c.task)!;
    assert.equal(t.state, c.state);
    if (c.reason !== undefined) assert.equal(t.reason, c.reason);
    assert.deepEqual(state.tasks.get(c.task)?.attempts.map((a) => a.outcome), c.outcomes);
  });
}

Deno.test("activity: exits and kept logs attach to their attempt; rows about unknown tasks are ignored", () => {
  const state = fold([
    ["task_claimed", { task_id: "a", session_id: "s1" }],
    ["agent_exited", { task_id: "a", session_id: "s1", exit_code: 3, duration_ms: 1200 }],
    ["task_log_captured", { task_id: "a", session_id: "s1", sha256: "sha256:00", bytes: 5 }],
    ["task_diff_captured", {
      task_id: "ghost",
      sha256: "sha256:11",
      added: 1,
      removed: 0,
      files: 1,
    }],
    ["task_log_captured", { task_id: "ghost", session_id: "s9", sha256: "sha256:22", bytes: 1 }],
  ]);
  assert.deepEqual(state.tasks.get("a")!.attempts[0].exit, {
    exit_code: 3,
    duration_ms: 1200,
    ended_by: undefined,
  });
  assert.deepEqual(state.tasks.get("a")!.attempts[0].log, { sha256: "sha256:00", bytes: 5 });
  assert.deepEqual(state.order, ["a"]);
});

Deno.test("activity: a completion's verification record attaches to its attempt", () => {
  const state = fold([
    ["task_claimed", { task_id: "a", session_id: "s1" }],
    ["task_verification_recorded", {
      task_id: "a",
      session_id: "s1",
      tests_run: true,
      quality_gates_run: false,
      completion_signals_checked: true,
      verified: true,
      test_runs: [{ runner: "pytest", outcome: "passed", line: "3 passed in 0.1s" }],
    }],
    ["task_verification_recorded", { task_id: "a", session_id: "s-unknown", verified: false }],
  ]);
  assert.deepEqual(state.tasks.get("a")!.attempts[0].verification, {
    tests_run: true,
    quality_gates_run: false,
    completion_signals_checked: true,
    verified: true,
    test_runs: [{ runner: "pytest", outcome: "passed", line: "3 passed in 0.1s" }],
  });
});

Deno.test("activity: an operator's completion is done with its reason and satisfies dependents; unreported completions say how", () => {
  const state = fold([
    PLAN,
    ["task_verification_failed", {
      task_id: "a",
      signals: [{
        kind: "operator_done",
        detail: "marked done by an operator; nothing was merged",
      }],
    }],
    ["task_done_by_operator", {
      task_id: "a",
      reason: "marked done by an operator; nothing was merged",
    }],
    ["task_claimed", { task_id: "b", session_id: "s1" }],
    ["task_completed", { task_id: "b", recovered: true }],
    ["task_claimed", { task_id: "c", session_id: "s2" }],
    ["task_completed", { task_id: "c", recovered: true, interrupted: true }],
  ]);
  const a = state.tasks.get("a")!;
  assert.deepEqual([a.state, a.reason], ["done", "marked done by an operator; nothing was merged"]);
  assert.equal(state.tasks.get("b")!.attempts[0].unreported, "exited");
  assert.equal(state.tasks.get("c")!.attempts[0].unreported, "interrupted");
  const fresh = fold([PLAN, ["task_done_by_operator", { task_id: "a", reason: "done" }]]);
  assert.deepEqual(
    outline(fresh).find((t) => t.task_id === "b")!.state,
    "planned",
    "b no longer waits on a",
  );
});

Deno.test("activity: an attempt stopped with the run reads interrupted, not running", () => {
  const state = fold([
    PLAN,
    ["task_claimed", { task_id: "a", session_id: "s1" }],
    ["agent_exited", {
      task_id: "a",
      session_id: "s1",
      exit_code: -15,
      duration_ms: 900,
      ended_by: "stop",
    }],
    ["task_retried", { task_id: "a", reason: "the run stopped; `service run` resumes it" }],
    ["task_claimed", { task_id: "a", session_id: "s2" }],
  ]);
  assert.deepEqual(state.tasks.get("a")!.attempts.map((a) => a.outcome), [
    "interrupted",
    "running",
  ]);
});

Deno.test("activity: attempts are numbered by claim, the same number the next claim gets", () => {
  const state = fold([
    ["task_claimed", { task_id: "a", session_id: "s1" }],
    ["task_completed", { task_id: "a" }],
    ["task_review_decision", { task_id: "a", decision: "request_changes", principal: "op" }],
    ["task_retried", { task_id: "a", reason: "changes requested" }],
  ]);
  assert.equal(nextAttemptNumber(state, "a"), 2);
  assert.equal(nextAttemptNumber(state, "unknown"), 1);
  foldActivity(state, row("task_claimed", { task_id: "a", session_id: "s2" }), 4);
  assert.deepEqual(state.tasks.get("a")!.attempts.map((a) => a.number), [1, 2]);
  assert.equal(nextAttemptNumber(state, "a"), 3);
});

/** The counts a `task_diff_captured` row carries. */
const DIFF = { added: 1, removed: 0, files: 1 };

Deno.test("activity: where the card's current story starts — a new claim, or a rebase that replaced reviewed work", () => {
  const state = fold([
    ["task_claimed", { task_id: "a", session_id: "s1" }], // 0
    ["task_diff_captured", { ...DIFF, task_id: "a", sha256: "sha256:d1" }], // 1
    ["task_completed", { task_id: "a" }], // 2
    ["task_review_decision", { task_id: "a", decision: "merge", principal: "op", note: "go" }], // 3
    ["task_verification_failed", {
      task_id: "a",
      signals: [{ kind: "merge_conflict", detail: "x.py" }],
    }], // 4
    ["task_retried", { task_id: "a", reason: "conflict" }], // 5
  ]);
  const a = state.tasks.get("a")!;
  assert.equal(a.current_since, 0);
  assert.equal(a.gated_index, 4, "the gates on the queued card are the last attempt's");
  assert.deepEqual(a.attempts[0].reviews, [
    { decision: "merge", principal: "op", note: "go", index: 3 },
  ]);
  foldActivity(state, row("task_claimed", { task_id: "a", session_id: "s2" }), 6);
  foldActivity(state, row("task_diff_captured", { ...DIFF, task_id: "a", sha256: "sha256:d2" }), 7);
  assert.equal(a.current_since, 6, "a diff of a new attempt nobody reviewed yet starts nothing");
  foldActivity(
    state,
    row("task_review_decision", {
      task_id: "a",
      decision: "merge",
      principal: "op",
    }),
    8,
  );
  foldActivity(state, row("task_diff_captured", { ...DIFF, task_id: "a", sha256: "sha256:d2" }), 9);
  assert.equal(a.current_since, 6, "the same diff again is the same story");
  foldActivity(
    state,
    row("task_diff_captured", { ...DIFF, task_id: "a", sha256: "sha256:d3" }),
    10,
  );
  assert.equal(a.current_since, 10, "a rebase replaced the reviewed diff: the verdict is history");
  assert.equal(a.diff_sha256, "sha256:d3");
});

Deno.test("outline: a journaled block is re-read against the journal as it is now", () => {
  const stuck = "blocked: waits on a (FAILED); `service retry a` tries it again";
  const base: [string, Record<string, JsonValue>][] = [
    PLAN,
    ["task_claimed", { task_id: "a", session_id: "s1" }],
    ["task_failed", { task_id: "a", reason: "gave up" }],
    ["task_waiting", { task_id: "b", reason: stuck }],
  ];
  const b = (extra: [string, Record<string, JsonValue>][]) =>
    outline(fold([...base, ...extra])).find((t) => t.task_id === "b")!;
  assert.deepEqual([b([]).state, b([]).reason], ["blocked", stuck], "a still FAILED: it stands");
  const cancelled = b([["task_cancelled", { task_id: "a", reason: "dropped" }]]);
  assert.deepEqual([cancelled.state, cancelled.reason], [
    "planned",
    "nothing blocks it any more: it starts when the run goes on",
  ]);
  const retried = b([
    ["task_retried", { task_id: "a", reason: "retried by an operator" }],
    ["task_claimed", { task_id: "a", session_id: "s2" }],
  ]);
  assert.deepEqual([retried.state, retried.reason], ["blocked", "blocked: waits on a (running)"]);
});

Deno.test("activity: each attempt keeps where its agent ran; the outline shows the latest claim's", () => {
  const image = "0f".repeat(32);
  const state = fold([
    PLAN,
    ["task_claimed", { task_id: "a", session_id: "s1", isolation: "worktree" }],
    ["agent_exited", { task_id: "a", session_id: "s1", exit_code: 1, duration_ms: 10 }],
    ["task_claimed", { task_id: "a", session_id: "s2", isolation: `container:podman:${image}` }],
    ["task_claimed", { task_id: "b", session_id: "s3" }],
  ]);
  const a = state.tasks.get("a")!;
  assert.deepEqual(a.attempts.map((x) => x.isolation), ["worktree", `container:podman:${image}`]);
  const tasks = new Map(outline(state).map((t) => [t.task_id, t]));
  assert.equal(tasks.get("a")!.isolation, `container:podman:${image}`);
  assert.equal(tasks.get("b")!.isolation, undefined, "a claim that says nothing claims nothing");
  assert.equal("isolation" in state.tasks.get("b")!.attempts[0], false);
});

Deno.test("activity: the operator's follow-ups are listed in order, even one sent before the claim row", () => {
  const state = fold([
    ["run_started", { run_id: "r" }],
    ["task_follow_up", {
      task_id: "n",
      seq: 1,
      principal: "ops",
      text: "first",
      audit_event_hash: "h1",
    }],
    ["task_claimed", { task_id: "n", session_id: "s1", title: "New", role: "dev" }],
    ["task_follow_up", {
      task_id: "n",
      seq: 2,
      principal: "ops",
      text: "<b>second</b>",
      audit_event_hash: "h2",
    }],
  ]);
  const n = state.tasks.get("n")!;
  assert.deepEqual(n.follow_ups, [
    { seq: 1, principal: "ops", text: "first", index: 1 },
    { seq: 2, principal: "ops", text: "<b>second</b>", index: 3 },
  ]);
  assert.equal(n.state, "running");
  assert.equal(n.attempts.length, 1);
});
