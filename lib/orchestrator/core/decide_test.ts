/** Table tests of the decision core: every way a task runs, stops, waits or lands. */
import assert from "node:assert/strict";
import type { TaskStatus } from "../../tasks/lifecycle.ts";
import { decide, type Step } from "./decide.ts";
import type { Action, CoreEvent, ExitDiagnosis, StoreChange } from "./protocol.ts";
import { type CoreSettings, type CoreState, initialState, type TaskView } from "./state.ts";
import { mergeWaitText } from "./on_landing.ts";

const SETTINGS: CoreSettings = {
  maxAgents: 4,
  roleMaxAgents: {},
  maxAttempts: 3,
  requireApproval: false,
  continuous: false,
  reportedExitGraceMs: 10_000,
  mergeRetryMs: 3000,
  maxRebases: 3,
  landUnreported: false,
  adapter: "claude",
  chains: { backend: ["claude"] },
};

function task(id: string, over: Partial<TaskView> = {}): TaskView {
  return {
    id,
    status: "OPEN",
    title: `Task ${id}`,
    role: "backend",
    priority: 2,
    seq: Number(id.replace(/\D/g, "")) || 0,
    owned_files: [],
    depends_on: [],
    attempts: 0,
    summary: null,
    ...over,
  };
}

function state(tasks: TaskView[], over: Partial<CoreState> = {}, settings = SETTINGS): CoreState {
  return {
    ...initialState(settings, 1_000_000),
    tasks: new Map(tasks.map((t) => [t.id, t])),
    ...over,
  };
}

/** The state with a live session for `id`. */
function running(s: CoreState, id: string, over: Partial<{ deadline: number }> = {}): CoreState {
  return {
    ...s,
    sessions: new Map([...s.sessions, [id, {
      taskId: id,
      sessionId: `s-${id}`,
      startedAt: s.now - 5000,
      deadline: over.deadline ?? s.now + 60_000,
    }]]),
  };
}

/** The state with `id`'s work landing at `stage`. */
function landing(
  s: CoreState,
  id: string,
  stage: "capturing" | "review" | "merging" | "rebasing" | "waiting",
  rebases = 0,
): CoreState {
  return {
    ...s,
    landings: new Map([...s.landings, [id, {
      taskId: id,
      stage,
      reason: stage,
      lastTry: s.now,
      rebases,
    }]]),
  };
}

/** The state after the store moved `id` to `status`. */
function withStatus(s: CoreState, id: string, status: TaskStatus, over: Partial<TaskView> = {}) {
  return { ...s, tasks: new Map([...s.tasks, [id, { ...s.tasks.get(id)!, status, ...over }]]) };
}

/** What a step did, in a form a table can compare: journal types, store ops, other kinds. */
function summary(step: Step): string[] {
  return step.actions.flatMap((a: Action) => {
    switch (a.kind) {
      case "journal":
        return [`journal ${a.event.type}`];
      case "store":
        return [`store ${a.change.op}`];
      case "log":
      case "publish_waits":
        return [];
      default:
        return [`${a.kind} ${"taskId" in a ? a.taskId : ""}`.trim()];
    }
  });
}

function logs(step: Step): string[] {
  return step.actions.flatMap((a) => a.kind === "log" ? [a.line] : []);
}

function journaled(step: Step, type: string): Record<string, unknown>[] {
  return step.actions.flatMap((a) =>
    a.kind === "journal" && a.event.type === type ? [a.event.data] : []
  );
}

function storeChange(step: Step, op: string) {
  return step.actions.find((a) => a.kind === "store" && a.change.op === op) as
    | Extract<Action, { kind: "store" }>
    | undefined;
}

/** The requeue a step asked of the store. */
function requeueOf(step: Step): Extract<StoreChange, { op: "requeue" }> {
  const change = storeChange(step, "requeue")?.change;
  assert.ok(change?.op === "requeue", "the step requeues the task");
  return change;
}

const crash: ExitDiagnosis = {
  kind: "agent_failed",
  reason: "agent exited (exit 3) without reporting completion: Error: boom",
  retryable: true,
};

function exited(id: string, over: Partial<Extract<CoreEvent, { type: "agent_exited" }>> = {}) {
  return {
    type: "agent_exited" as const,
    taskId: id,
    sessionId: `s-${id}`,
    exitCode: 3,
    durationMs: 9000,
    rateLimited: false,
    hasWork: false,
    diagnosis: crash,
    ...over,
  };
}

Deno.test("decide(): a spawned agent's claim is journaled with its attempt, model and adapter", () => {
  const s = {
    ...state([task("t1", { status: "CLAIMED", attempts: 1 })]),
    starting: new Set(["t1"]),
  };
  const step = decide(s, {
    type: "spawned",
    adapter: "claude",
    taskId: "t1",
    sessionId: "s-1",
    startedAt: 1,
    deadline: 2,
    attempt: 1,
    model: "m",
  });
  assert.deepEqual(summary(step), ["journal task_claimed"]);
  assert.deepEqual(journaled(step, "task_claimed")[0], {
    task_id: "t1",
    session_id: "s-1",
    title: "Task t1",
    role: "backend",
    attempt: 1,
    model: "m",
    adapter: "claude",
  });
  assert.equal(step.state.sessions.get("t1")?.sessionId, "s-1");
  assert.equal(step.state.starting.size, 0);
  assert.equal(step.state.attemptOf.get("t1"), 1, "kept for the rows about this attempt");
});

Deno.test("decide(): the terminal numbers each run and, after runs that counted none, what the retry limit counts", () => {
  const said = (attempt: number, counted: number | undefined, adapter = "claude") => {
    const s = {
      ...state([task("t1", { status: "CLAIMED", attempts: counted ?? attempt })]),
      starting: new Set(["t1"]),
    };
    const step = decide(s, {
      type: "spawned",
      adapter,
      taskId: "t1",
      sessionId: "s-2",
      startedAt: 1,
      deadline: 2,
      attempt,
      ...(counted === undefined ? {} : { counted }),
    });
    return step.actions.flatMap((a) => a.kind === "log" ? [a.line] : []).join("\n");
  };
  assert.match(said(1, 1), /started \(backend, attempt 1\)$/);
  assert.match(said(2, 2), /started \(backend, attempt 2\)$/, "the first run counted");
  // After a usage limit or a batch try (no attempt counted): the second run counts as the first.
  assert.match(said(2, 1), /started \(backend, attempt 2, counted as 1 of 3\)$/);
  assert.match(said(3, 1, "codex"), /started \(backend, attempt 3, counted as 1 of 3, codex\)$/);
  assert.match(said(2, undefined), /started \(backend, attempt 2\)$/, "a worker's start");
});

Deno.test("decide(): reported work is captured, completed, merged and reaped", () => {
  let s = running(state([task("t1", { status: "DONE", attempts: 1, summary: "did it" })]), "t1");
  let step = decide(s, exited("t1", { exitCode: 0 }));
  assert.deepEqual(summary(step), ["journal agent_exited", "capture t1"]);
  step = decide(step.state, { type: "captured", taskId: "t1" });
  assert.deepEqual(summary(step), ["journal task_completed", "merge t1"]);
  assert.deepEqual(journaled(step, "task_completed")[0], { task_id: "t1", summary: "did it" });
  s = step.state;
  step = decide(s, {
    type: "merge_result",
    taskId: "t1",
    result: { kind: "merged", commit: "abc" },
  });
  assert.deepEqual(summary(step), ["journal task_merged", "store merged", "reap t1"]);
  assert.equal(step.state.landings.size, 0);
});

Deno.test("decide(): under require_approval completed work waits for the board's merge", () => {
  const settings = { ...SETTINGS, requireApproval: true };
  let s = landing(
    state([task("t1", { status: "DONE", attempts: 1 })], {}, settings),
    "t1",
    "capturing",
  );
  let step = decide(s, { type: "captured", taskId: "t1" });
  assert.deepEqual(summary(step), ["journal task_completed"]);
  assert.equal(step.state.landings.get("t1")?.stage, "review");
  s = step.state;
  step = decide(s, { type: "review", taskId: "t1", decision: "approve", principal: "ann" });
  assert.deepEqual(summary(step), [], "approve attaches a verdict only");
  step = decide(s, { type: "review", taskId: "t1", decision: "merge", principal: "ann" });
  assert.deepEqual(summary(step), ["merge t1"]);
  const again = decide(step.state, {
    type: "review",
    taskId: "t1",
    decision: "merge",
    principal: "bo",
  });
  assert.deepEqual(summary(again), [], "a second merge while merging does nothing");
  step = decide(s, {
    type: "review",
    taskId: "t1",
    decision: "request_changes",
    principal: "ann",
    note: "call it final",
  });
  assert.deepEqual(summary(step), ["reap t1", "store requeue", "journal task_retried"]);
  assert.equal(
    storeChange(step, "requeue")?.change.op === "requeue" &&
      (storeChange(step, "requeue")!.change as { countAttempt: boolean }).countAttempt,
    false,
  );
  assert.match(step.state.notes.get("t1")!, /ann\) requested changes: call it final/);
});

Deno.test("decide(): under require_approval work whose gates already failed goes to the merge, not to review", () => {
  const settings = { ...SETTINGS, requireApproval: true };
  const s = landing(
    state([task("t1", { status: "DONE", attempts: 1 })], {}, settings),
    "t1",
    "capturing",
  );
  const step = decide(s, { type: "captured", taskId: "t1", gatesFailed: true });
  assert.deepEqual(summary(step), ["journal task_completed", "merge t1"]);
  assert.equal(step.state.landings.get("t1")?.stage, "merging");
});

Deno.test("decide(): failed gates send the work back until the attempts are spent, then FAIL", () => {
  const signals = [{ kind: "test_passes", detail: "pytest", output_tail: "1 failed" }];
  for (const [attempts, expected] of [[1, "retry"], [2, "retry"], [3, "fail"]] as const) {
    const s = landing(state([task("t1", { status: "DONE", attempts })]), "t1", "merging");
    const step = decide(s, {
      type: "merge_result",
      taskId: "t1",
      result: { kind: "gates_failed", signals },
    });
    assert.deepEqual(journaled(step, "task_verification_failed")[0], { task_id: "t1", signals });
    if (expected === "retry") {
      assert.deepEqual(summary(step), [
        "reap t1",
        "journal task_verification_failed",
        "store requeue",
        "journal task_retried",
      ]);
      assert.match(step.state.notes.get("t1")!, /gates failed.*test_passes pytest[\s\S]*1 failed/);
    } else {
      assert.deepEqual(summary(step), [
        "reap t1",
        "journal task_verification_failed",
        "store merge_failed",
        "journal task_failed",
      ]);
      assert.match(String(journaled(step, "task_failed")[0].reason), /after 3 failed attempts/);
    }
  }
});

Deno.test("decide(): a failed quality gate's reason names the gate, its exit code and what it said, not its command", () => {
  const command = 'for f in test/*.js; do node $f || { echo "failed: $f"; exit 1; }; done';
  const signals = [{
    kind: "quality_gate",
    name: "tests",
    detail: command,
    output_tail: "ok 1 parse\nfailed: test/parse.js\n[exit 1]",
  }];
  const merged = (attempts: number) =>
    decide(landing(state([task("t1", { status: "DONE", attempts })]), "t1", "merging"), {
      type: "merge_result",
      taskId: "t1",
      result: { kind: "gates_failed", signals },
    });
  const reason = String(journaled(merged(3), "task_failed")[0].reason);
  assert.match(
    reason,
    /^the gates failed on the merged tree: quality_gate tests \(exit 1\): failed: test\/parse\.js/,
  );
  assert.ok(!reason.includes("for f in"), reason);
  // The note the next attempt reads keeps the command with the gate's output.
  assert.match(merged(1).state.notes.get("t1") ?? "", /for f in test[\s\S]*failed: test\/parse/);
});

Deno.test("decide(): a merge conflict is rebased first; a clean rebase merges, or waits for review when its diff changed", () => {
  const s = landing(state([task("t1", { status: "DONE", attempts: 1 })]), "t1", "merging");
  let step = decide(s, {
    type: "merge_result",
    taskId: "t1",
    result: { kind: "conflict", files: ["a.py"] },
  });
  assert.deepEqual(summary(step), ["rebase t1"]);
  const rebasing = step.state;
  step = decide(rebasing, {
    type: "rebase_result",
    taskId: "t1",
    result: { kind: "rebased", tip: "f00", onto: "0b5", diffChanged: true },
  });
  assert.deepEqual(summary(step), ["journal task_rebased", "merge t1"]);
  assert.equal(step.state.landings.get("t1")?.rebases, 1);

  const approval = { ...rebasing, settings: { ...SETTINGS, requireApproval: true } };
  step = decide(approval, {
    type: "rebase_result",
    taskId: "t1",
    result: { kind: "rebased", tip: "f00", onto: "0b5", diffChanged: true },
  });
  assert.deepEqual(summary(step), ["journal task_rebased", "journal task_completed"]);
  assert.equal(step.state.landings.get("t1")?.stage, "review");
  step = decide(approval, {
    type: "rebase_result",
    taskId: "t1",
    result: { kind: "rebased", tip: "f00", onto: "0b5", diffChanged: false },
  });
  assert.deepEqual(
    summary(step),
    ["journal task_rebased", "merge t1"],
    "same change: no new review",
  );
});

Deno.test("decide(): task_rebased names the new base as `onto` and the rebased head apart; the log says the base", () => {
  const s = landing(state([task("t1", { status: "DONE", attempts: 1 })]), "t1", "rebasing");
  const step = decide(s, {
    type: "rebase_result",
    taskId: "t1",
    result: { kind: "rebased", tip: "feedbeef00", onto: "ba5eba5e00", diffChanged: false },
  });
  assert.deepEqual(journaled(step, "task_rebased"), [{
    task_id: "t1",
    onto: "ba5eba5e00",
    head: "feedbeef00",
    diff_changed: false,
  }]);
  const said = step.actions.flatMap((a) => a.kind === "log" ? [a.line] : []);
  assert.ok(said.some((l) => /rebased onto ba5eba5e00; merging/.test(l)), said.join("\n"));
});

Deno.test("decide(): a conflict the rebase cannot solve is a new attempt told about the other change; spent attempts FAIL naming the files", () => {
  const conflict = {
    type: "rebase_result" as const,
    taskId: "t1",
    result: {
      kind: "conflict" as const,
      files: ["textkit/__init__.py", "b.py"],
      otherChange: "abc other task\n+__all__ = ['slug']",
    },
  };
  let step = decide(
    landing(
      // Its third attempt (claimed after a request for changes): the first that failed.
      state([task("t1", { status: "DONE", attempts: 1 })], { attemptOf: new Map([["t1", 3]]) }),
      "t1",
      "rebasing",
    ),
    conflict,
  );
  assert.equal(journaled(step, "merge_conflict")[0].attempt, 3, "the attempt's own number");
  assert.match(String(journaled(step, "task_retried")[0].reason), /failed attempt 1 of 3/);
  assert.deepEqual(summary(step), [
    "journal merge_conflict",
    "reap t1",
    "journal task_verification_failed",
    "store requeue",
    "journal task_retried",
  ]);
  assert.deepEqual(journaled(step, "task_verification_failed")[0].signals, [
    { kind: "merge_conflict", detail: "textkit/__init__.py" },
    { kind: "merge_conflict", detail: "b.py" },
  ]);
  assert.match(
    step.state.notes.get("t1")!,
    /conflicted in textkit\/__init__\.py, b\.py[\s\S]*__all__/,
  );
  step = decide(
    landing(state([task("t1", { status: "DONE", attempts: 3 })]), "t1", "rebasing"),
    conflict,
  );
  assert.ok(summary(step).includes("store merge_failed"));
  assert.deepEqual(journaled(step, "task_failed")[0].files, ["textkit/__init__.py", "b.py"]);
  assert.match(String(journaled(step, "task_failed")[0].reason), /merge conflict in textkit/);
  // A conflict after the rebases of this attempt are used up skips straight to a new attempt.
  step = decide(
    landing(state([task("t1", { status: "DONE", attempts: 1 })]), "t1", "merging", 3),
    { type: "merge_result", taskId: "t1", result: { kind: "conflict", files: ["a.py"] } },
  );
  assert.ok(summary(step).includes("store requeue"));
});

Deno.test("decide(): how an agent ended decides its task's outcome", () => {
  type Row = [string, TaskStatus, number, Partial<ReturnType<typeof exited>>, string[]];
  const table: Row[] = [
    ["crash, attempts left", "IN_PROGRESS", 1, {}, [
      "journal agent_exited",
      "store orphan",
      "reap t1",
      "journal task_verification_failed",
      "store requeue",
      "journal task_retried",
    ]],
    ["crash, attempts spent", "IN_PROGRESS", 3, {}, [
      "journal agent_exited",
      "store orphan",
      "reap t1",
      "journal task_verification_failed",
      "store give_up",
      "journal task_failed",
    ]],
    ["missing binary: never retried", "CLAIMED", 1, {
      exitCode: 127,
      diagnosis: {
        kind: "spawn_error",
        reason: "agent exited 127 (command not found)",
        retryable: false,
      },
    }, [
      "journal agent_exited",
      "store orphan",
      "reap t1",
      "journal task_verification_failed",
      "store give_up",
      "journal task_failed",
    ]],
    [
      "exited 0 on its own with work: a completion candidate, landed through the gates",
      "IN_PROGRESS",
      1,
      {
        exitCode: 0,
        hasWork: true,
      },
      [
        "journal agent_exited",
        "store orphan",
        "store recover_done",
        "capture t1",
      ],
    ],
    ["crashed with work: kept for the next attempt, never landed", "IN_PROGRESS", 1, {
      hasWork: true,
    }, [
      "journal agent_exited",
      "store orphan",
      "reap t1",
      "journal task_verification_failed",
      "store requeue",
      "journal task_retried",
    ]],
    ["killed with work, signals passing, land_unreported off: not landed", "IN_PROGRESS", 1, {
      exitCode: 137,
      hasWork: true,
      signalsPass: true,
    }, [
      "journal agent_exited",
      "store orphan",
      "reap t1",
      "journal task_verification_failed",
      "store requeue",
      "journal task_retried",
    ]],
    ["rate limited: requeued, the attempt not counted", "IN_PROGRESS", 1, { rateLimited: true }, [
      "journal agent_exited",
      "store orphan",
      "reap t1",
      "store requeue",
      "journal task_retried",
    ]],
    ["the agent reported failure (POST /fail)", "FAILED", 1, {}, [
      "journal agent_exited",
      "journal task_verification_failed",
      "journal task_failed",
      "reap t1",
    ]],
    ["an operator cancelled it", "CANCELLED", 1, {}, [
      "journal agent_exited",
      "journal task_verification_failed",
      "journal task_cancelled",
      "reap t1",
    ]],
  ];
  for (const [name, status, attempts, over, expected] of table) {
    const s = running(
      state([task("t1", { status, attempts, summary: "tests will not pass" })]),
      "t1",
    );
    const step = decide(s, exited("t1", over));
    assert.deepEqual(summary(step), expected, name);
    assert.equal(step.state.sessions.size, 0, name);
  }
  const s = running(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })]), "t1");
  const step = decide(s, exited("t1"));
  assert.deepEqual(journaled(step, "task_verification_failed")[0].signals, [
    { kind: "agent_failed", detail: crash.reason },
  ]);
  const rate = decide(s, exited("t1", { rateLimited: true }));
  assert.equal(
    (storeChange(rate, "requeue")!.change as { countAttempt: boolean }).countAttempt,
    false,
  );
  const failed = decide(
    running(state([task("t1", { status: "FAILED", attempts: 1, summary: "no database" })]), "t1"),
    exited("t1", { exitCode: 0 }),
  );
  assert.deepEqual(journaled(failed, "task_verification_failed")[0].signals, [
    { kind: "agent_reported_failure", detail: "no database" },
  ]);
});

Deno.test("decide(): ticks end agents past their deadline and reported agents that linger", () => {
  let s = running(state([task("t1", { status: "IN_PROGRESS" })]), "t1", { deadline: 999_999 });
  let step = decide(s, { type: "tick" });
  assert.ok(summary(step).includes("terminate t1"));
  assert.equal(step.state.sessions.get("t1")?.endedBy, "timeout");
  assert.ok(!summary(decide(step.state, { type: "tick" })).includes("terminate t1"), "once");

  s = running(state([task("t1", { status: "DONE" })]), "t1");
  step = decide(s, { type: "tick" });
  assert.ok(!summary(step).includes("terminate t1"), "a reported agent gets a grace");
  step = decide({ ...step.state, now: s.now + 10_000 }, { type: "tick" });
  assert.ok(summary(step).includes("terminate t1"));
  assert.equal(step.state.sessions.get("t1")?.endedBy, "reported");
});

Deno.test("decide(): an operator's cancel ends a running agent, drops landing work, records a queued task", () => {
  let s = running(state([task("t1", { status: "CANCELLED" })]), "t1");
  let step = decide(s, {
    type: "task_changed",
    taskId: "t1",
    from: "IN_PROGRESS",
    to: "CANCELLED",
  });
  assert.deepEqual(summary(step), ["terminate t1"]);
  s = landing(state([task("t1", { status: "CANCELLED" })]), "t1", "review");
  step = decide(s, { type: "task_changed", taskId: "t1", from: "DONE", to: "CANCELLED" });
  assert.deepEqual(summary(step), [
    "reap t1",
    "journal task_verification_failed",
    "journal task_cancelled",
  ]);
  s = state([task("t1", { status: "CANCELLED", summary: "not needed" })]);
  step = decide(s, { type: "task_changed", taskId: "t1", from: "OPEN", to: "CANCELLED" });
  assert.deepEqual(journaled(step, "task_verification_failed")[0].signals, [
    { kind: "cancelled", detail: "cancelled: not needed" },
  ]);
  // The store keeps a retry's reason as the summary: an operator's, or a reopened ticket's.
  for (const reason of ["retried by an operator", "ticket o/r#4 was reopened in tracker_b"]) {
    step = decide(withStatus(s, "t1", "OPEN", { summary: reason }), {
      type: "task_changed",
      taskId: "t1",
      from: "CANCELLED",
      to: "OPEN",
    });
    assert.deepEqual(journaled(step, "task_retried"), [{ task_id: "t1", reason }]);
  }
});

Deno.test("decide(): a ticket closed and reopened before the loop saw the cancel: the agent on the old claim is ended, the retry journaled", () => {
  const reopened = { status: "OPEN" as const, summary: "ticket o/r#4 was reopened in tracker_b" };
  const s = running(state([task("t1", reopened)]), "t1");
  // The cancel's change comes first, but the task has moved on since: the later change decides.
  let step = decide(s, {
    type: "task_changed",
    taskId: "t1",
    from: "IN_PROGRESS",
    to: "CANCELLED",
  });
  assert.deepEqual(summary(step), []);
  step = decide(step.state, { type: "task_changed", taskId: "t1", from: "CANCELLED", to: "OPEN" });
  assert.deepEqual(summary(step), ["terminate t1", "journal task_retried"]);
  assert.equal(step.state.sessions.get("t1")?.endedBy, "cancelled");
});

Deno.test("decide(): a cancel that comes while the merge step runs waits for its result: nothing landed, the cancel stands; landed, it stays landed and says so", () => {
  const closed = { status: "CANCELLED" as const, summary: "ticket o/r#4 was closed in tracker_b" };
  const s = landing(state([task("t1", closed)]), "t1", "merging");
  let step = decide(s, { type: "task_changed", taskId: "t1", from: "DONE", to: "CANCELLED" });
  assert.deepEqual(summary(step), [], "nothing recorded while the merge is under way");
  const cancelling = step.state;
  // The gates failed on the merged tree: nothing landed, no new attempt; the cancel is recorded.
  step = decide(cancelling, {
    type: "merge_result",
    taskId: "t1",
    result: { kind: "gates_failed", signals: [] },
  });
  assert.deepEqual(summary(step), [
    "reap t1",
    "journal task_verification_failed",
    "journal task_cancelled",
  ]);
  assert.deepEqual(journaled(step, "task_cancelled"), [
    { task_id: "t1", reason: "cancelled: ticket o/r#4 was closed in tracker_b" },
  ]);
  assert.equal(step.state.landings.size, 0);
  // The merge landed before the cancel could stop it: the journal says it merged, not cancelled.
  step = decide(cancelling, {
    type: "merge_result",
    taskId: "t1",
    result: { kind: "merged", commit: "abc" },
  });
  assert.deepEqual(summary(step), ["journal task_merged", "store merged", "reap t1"]);
  assert.match(
    logs(step).join("\n"),
    /the cancel came while its merge was landing: it stays landed/,
  );
});

Deno.test("decide(): a pull request a person closed cancels its task through the store; the cancel's change is recorded at once, no merge being under way", () => {
  const s = landing(state([task("t1", { status: "DONE" })]), "t1", "merging");
  let step = decide(s, {
    type: "merge_result",
    taskId: "t1",
    result: { kind: "closed", reason: "pull request #3 was closed by ann" },
  });
  assert.deepEqual(summary(step), ["store cancel"]);
  const cancelled = { summary: "pull request #3 was closed by ann" };
  step = decide(withStatus(step.state, "t1", "CANCELLED", cancelled), {
    type: "task_changed",
    taskId: "t1",
    from: "DONE",
    to: "CANCELLED",
  });
  assert.deepEqual(summary(step), [
    "reap t1",
    "journal task_verification_failed",
    "journal task_cancelled",
  ]);
});

Deno.test("decide(): overlapping owned_files wait for the earlier task's merge, journaled once", () => {
  const s = landing(
    state([
      task("t1", { status: "DONE", owned_files: ["pkg/__init__.py"] }),
      task("t2", { owned_files: ["pkg/__init__.py"] }),
      task("t3", { owned_files: ["docs/x.md"] }),
    ]),
    "t1",
    "review",
  );
  const step = decide(s, { type: "tick" });
  assert.deepEqual(summary(step).filter((x) => x.startsWith("spawn")), ["spawn t3"]);
  assert.deepEqual(journaled(step, "task_waiting"), [
    { task_id: "t2", reason: "waiting for t1 to merge: both own pkg/__init__.py" },
  ]);
  const again = decide({ ...step.state, starting: new Set() }, { type: "tick" });
  assert.deepEqual(journaled(again, "task_waiting"), [], "the same reason is not journaled twice");
});

Deno.test("decide(): dependents of a FAILED task stay blocked with the way out, and the run ends failed", () => {
  const s = state([
    task("core-1", { status: "FAILED", summary: "gates failed" }),
    task("docs-1", { status: "BLOCKED", depends_on: ["core-1"] }),
    task("docs-2", { status: "BLOCKED", depends_on: ["docs-1"] }),
  ]);
  const step = decide(s, { type: "tick" });
  const waits = journaled(step, "task_waiting").map((w) => w.task_id);
  assert.deepEqual(waits, ["docs-1", "docs-2"]);
  assert.match(
    step.state.waits.get("docs-2")!,
    /waits on docs-1 \(BLOCKED behind core-1, which FAILED\); `service retry core-1`/,
  );
  assert.match(step.state.waits.get("docs-1")!, /service retry core-1/);
  const finish = step.actions.find((a) => a.kind === "finish");
  assert.ok(finish && finish.kind === "finish");
  assert.equal(finish.verdict.status, "failed");
  assert.match(
    finish.verdict.problems.join("\n"),
    /core-1: FAILED — gates failed \(`service retry core-1`\)/,
  );
  assert.match(finish.verdict.problems.join("\n"), /docs-1: BLOCKED — waits on core-1/);
});

Deno.test("decide(): the budget stops scheduling once, journaled, and the run ends with what did not start", () => {
  const s = state([task("t1", { status: "CLOSED" }), task("t2")], {
    readOnly: true,
    budget: {
      total_micro_usd: 900,
      budget_micro_usd: 1000,
      estimate_micro_usd: 300,
      message: "Budget exceeded, read-only mode",
    },
  });
  const step = decide(s, { type: "tick" });
  assert.deepEqual(journaled(step, "budget_exceeded"), [
    { total_micro_usd: 900, budget_micro_usd: 1000, estimate_micro_usd: 300 },
  ]);
  assert.ok(!summary(step).some((x) => x.startsWith("spawn")));
  const finish = step.actions.find((a) => a.kind === "finish") as Extract<
    Action,
    { kind: "finish" }
  >;
  assert.equal(finish.verdict.status, "failed");
  assert.match(finish.verdict.problems[0], /t2: not started — budget reached/);
  assert.deepEqual(journaled(decide(step.state, { type: "tick" }), "budget_exceeded"), []);
});

Deno.test("decide(): stop ends every agent, keeps their work, and the run ends stopped", () => {
  let s = running(
    running(
      state([
        task("t1", { status: "IN_PROGRESS" }),
        task("t2", {
          status: "IN_PROGRESS",
        }),
      ]),
      "t1",
    ),
    "t2",
  );
  let step = decide(s, { type: "stop" });
  assert.deepEqual(summary(step), ["terminate t1", "terminate t2"]);
  s = step.state;
  step = decide(s, exited("t1", { exitCode: -15 }));
  assert.deepEqual(summary(step), [
    "journal agent_exited",
    "store orphan",
    "keep t1",
    "journal task_retried",
  ]);
  step = decide(step.state, { type: "tick" });
  assert.ok(!step.actions.some((a) => a.kind === "finish"), "t2 still runs");
  step = decide(step.state, exited("t2", { exitCode: -15 }));
  step = decide(step.state, { type: "tick" });
  const finish = step.actions.find((a) => a.kind === "finish") as Extract<
    Action,
    { kind: "finish" }
  >;
  assert.equal(finish.verdict.status, "stopped");
});

Deno.test("decide(): a second stop (Ctrl-C again) sends SIGKILL now to the agents still ending, and only to them", () => {
  const s = running(
    running(
      running(
        state([
          task("t1", { status: "IN_PROGRESS" }),
          task("t2", { status: "IN_PROGRESS" }),
          task("t3", { status: "IN_PROGRESS" }),
        ]),
        "t1",
      ),
      "t2",
    ),
    "t3",
  );
  const now = (step: Step) =>
    step.actions.flatMap((a) => a.kind === "terminate" && a.now ? [a.taskId] : []);
  let step = decide(s, { type: "stop" });
  assert.deepEqual(now(step), [], "the first stop waits out the grace");
  step = decide(step.state, exited("t1", { exitCode: -15 }));
  const again = decide(step.state, { type: "stop", now: true });
  assert.deepEqual(now(again), ["t2", "t3"], "t1 has ended already");
  assert.deepEqual(
    again.actions.filter((a) => a.kind === "log").map((a) => (a as { line: string }).line),
    ["stopping now: SIGKILL to 2 agent(s); their work is kept"],
  );
  assert.deepEqual(now(decide(again.state, { type: "stop", now: true })), ["t2", "t3"]);
  // Both at once (the CLI's two signals before the loop saw either): terminate, then kill now.
  const both = decide(s, { type: "stop", now: true });
  assert.deepEqual(summary(both), [
    "terminate t1",
    "terminate t2",
    "terminate t3",
    "terminate t1",
    "terminate t2",
    "terminate t3",
  ]);
  assert.deepEqual(now(both), ["t1", "t2", "t3"]);
  // An agent whose start was under way: SIGKILL as soon as it has started.
  const late = decide({ ...again.state, starting: new Set(["t4"]) }, {
    type: "spawned",
    adapter: "claude",
    taskId: "t4",
    sessionId: "s-t4",
    startedAt: 1,
    deadline: 2,
    attempt: 1,
  });
  assert.deepEqual(now(late), ["t4"]);
  // Stopped agents still end as stopped: their exit keeps their work and counts no attempt.
  const exit = decide(again.state, exited("t2", { exitCode: -9 }));
  assert.ok(summary(exit).includes("keep t2"));
});

Deno.test("decide(): a merge that waits is journaled once and tried again after the retry interval", () => {
  const s = landing(state([task("t1", { status: "DONE" })]), "t1", "merging");
  const wait = {
    kind: "waiting" as const,
    reason: "uncommitted changes in README.md would be overwritten",
  };
  let step = decide(s, { type: "merge_result", taskId: "t1", result: wait });
  step = decide(step.state, { type: "tick" });
  assert.deepEqual(journaled(step, "task_waiting"), [
    { task_id: "t1", reason: `merge waits: ${wait.reason}` },
  ]);
  assert.ok(!summary(step).includes("merge t1"), "not yet");
  assert.equal(step.state.waits.get("t1"), `merge waits: ${wait.reason}`);
  step = decide({ ...step.state, now: s.now + 3000 }, { type: "tick" });
  assert.ok(summary(step).includes("merge t1"));
  step = decide(step.state, { type: "merge_result", taskId: "t1", result: wait });
  step = decide(step.state, { type: "tick" });
  assert.deepEqual(journaled(step, "task_waiting"), [], "the same wait is journaled once");
});

Deno.test("decide(): a task left by a stopped or crashed orchestrator gets a new attempt that continues its kept work, counting none", () => {
  const claimed = state([task("t1", { status: "IN_PROGRESS", attempts: 1 })]);
  const withWork = decide(claimed, {
    type: "recovered",
    taskId: "t1",
    sessionId: "s-1",
    hasWorktree: true,
    hasWork: true,
  });
  assert.deepEqual(summary(withWork), [
    "store orphan",
    "reap t1",
    "store requeue",
    "journal task_retried",
  ]);
  assert.deepEqual(storeChange(withWork, "requeue")!.change, {
    op: "requeue",
    taskId: "t1",
    reason: "its agent was lost when the orchestrator stopped; a new attempt continues from " +
      "its kept work (no attempt counted)",
    countAttempt: false,
    resumeFrom: "s-1",
  });
  const noWork = decide(claimed, {
    type: "recovered",
    taskId: "t1",
    sessionId: "s-1",
    hasWorktree: true,
    hasWork: false,
  });
  assert.deepEqual(summary(noWork), [
    "store orphan",
    "reap t1",
    "store requeue",
    "journal task_retried",
  ]);
  assert.equal(requeueOf(noWork).countAttempt, false);
  assert.equal(requeueOf(noWork).resumeFrom, null);
  assert.equal(
    requeueOf(noWork).reason,
    "its agent was lost when the orchestrator stopped; it left no work; a new attempt starts " +
      "afresh (no attempt counted)",
  );
  // A stop left it ORPHANED with its summary: the reason says the agent was stopped.
  const stopped = state([task("t1", { status: "ORPHANED", attempts: 3, summary: "run stopped" })]);
  const resumed = decide(stopped, {
    type: "recovered",
    taskId: "t1",
    sessionId: "s-3",
    hasWorktree: true,
    hasWork: true,
  });
  assert.equal(
    journaled(resumed, "task_retried")[0].reason,
    "its agent was stopped with the run; a new attempt continues from its kept work " +
      "(no attempt counted)",
  );
  assert.deepEqual(journaled(resumed, "task_failed"), [], "three stops do not spend the attempts");
  const done = state([task("t1", { status: "DONE", attempts: 1 })]);
  assert.deepEqual(
    summary(decide(done, { type: "recovered", taskId: "t1", hasWorktree: true, hasWork: false })),
    ["capture t1"],
  );
});

Deno.test("decide(): recovery.land_unreported lands interrupted work only when every completion signal passes", () => {
  const on = { ...SETTINGS, landUnreported: true };
  const claimed = state([task("t1", { status: "IN_PROGRESS", attempts: 1 })], {}, on);
  const recovered = (signalsPass: boolean) =>
    decide(claimed, {
      type: "recovered",
      taskId: "t1",
      sessionId: "s-1",
      hasWorktree: true,
      hasWork: true,
      signalsPass,
    });
  assert.deepEqual(summary(recovered(true)), ["store orphan", "store recover_done", "capture t1"]);
  assert.equal(recovered(true).state.landings.get("t1")!.unreported, "interrupted");
  assert.deepEqual(summary(recovered(false)), [
    "store orphan",
    "reap t1",
    "store requeue",
    "journal task_retried",
  ]);
  const live = running(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })], {}, on), "t1");
  const timedOut = (signalsPass: boolean) =>
    decide(
      { ...live, sessions: new Map([["t1", { ...live.sessions.get("t1")!, endedBy: "timeout" }]]) },
      exited("t1", { exitCode: 124, hasWork: true, signalsPass }),
    );
  assert.ok(summary(timedOut(true)).includes("store recover_done"));
  assert.ok(!summary(timedOut(false)).includes("store recover_done"));
  // Its completion row and its landing say it was never reported.
  let step = timedOut(true);
  step = decide(step.state, { type: "captured", taskId: "t1" });
  assert.deepEqual(journaled(step, "task_completed"), [
    { task_id: "t1", recovered: true, interrupted: true },
  ]);
});

Deno.test("decide(): an interrupted attempt's work is what the next attempt continues; a failed completion's is not", () => {
  const live = running(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })]), "t1");
  const timedOut = decide(
    { ...live, sessions: new Map([["t1", { ...live.sessions.get("t1")!, endedBy: "timeout" }]]) },
    exited("t1", { exitCode: 124, hasWork: true }),
  );
  assert.equal(requeueOf(timedOut).resumeFrom, "s-t1");
  assert.equal(requeueOf(timedOut).countAttempt, true);
  const gates = decide(
    landing(
      state([task("t1", { status: "DONE", attempts: 1, resumeFrom: "s-0" })]),
      "t1",
      "merging",
    ),
    {
      type: "merge_result",
      taskId: "t1",
      result: { kind: "gates_failed", signals: [{ kind: "test_passes", detail: "false" }] },
    },
  );
  assert.equal(requeueOf(gates).resumeFrom, null, "gated work starts afresh");
});

Deno.test("decide(): an operator's completion of a waiting task is done for good: journaled, nothing landed, dependents start, the run completes", () => {
  let s = state([
    task("t1", { status: "DONE", operatorDone: true }),
    task("t2", { status: "OPEN", depends_on: ["t1"] }),
  ]);
  let step = decide(s, { type: "task_changed", taskId: "t1", from: "OPEN", to: "DONE" });
  assert.deepEqual(summary(step), [
    "journal task_verification_failed",
    "journal task_done_by_operator",
  ]);
  assert.deepEqual(journaled(step, "task_verification_failed")[0].signals, [
    { kind: "operator_done", detail: "marked done by an operator; nothing was merged" },
  ]);
  step = decide(step.state, { type: "tick" });
  assert.deepEqual(summary(step), ["spawn t2"], "a dependent does not wait for a merge");
  s = withStatus(step.state, "t2", "CLOSED");
  s = { ...s, starting: new Set() };
  const finish = decide(s, { type: "tick" }).actions.find((a) => a.kind === "finish");
  assert.deepEqual(finish, {
    kind: "finish",
    verdict: { status: "completed", problems: ["t1: DONE by an operator (nothing merged)"] },
  });
  // After a restart it is neither landed nor retried.
  const recovered = decide(state([task("t1", { status: "DONE", operatorDone: true })]), {
    type: "recovered",
    taskId: "t1",
    hasWorktree: false,
    hasWork: false,
  });
  assert.deepEqual(summary(recovered), []);
});

Deno.test("decide(): an agent that could not start is a failed attempt with the reason", () => {
  const s = {
    ...state([task("t1", { status: "CLAIMED", attempts: 1 })]),
    starting: new Set(["t1"]),
  };
  const step = decide(s, {
    type: "spawn_failed",
    taskId: "t1",
    sessionId: "s",
    diagnosis: {
      kind: "spawn_failed",
      reason: "could not start the agent: ENOENT",
      retryable: false,
    },
  });
  assert.deepEqual(summary(step), [
    "store orphan",
    "reap t1",
    "journal task_verification_failed",
    "store give_up",
    "journal task_failed",
  ]);
  assert.equal(step.state.starting.size, 0);
});

Deno.test("decide(): a failed worktree setup is a counted attempt, journaled with its claim and what the worktree got; the last one fails the task", () => {
  const prepared = {
    copied: [".env"],
    linked: [],
    setup: [{ command: "npm ci", exit_code: 1, ms: 812 }],
    ports: [20000],
  };
  const failed = (attempts: number): CoreEvent => ({
    type: "spawn_failed",
    taskId: "t1",
    sessionId: `s${attempts}`,
    diagnosis: {
      kind: "setup_failed",
      reason: "setup_failed: npm ci: npm ERR! 404 Not Found",
      retryable: true,
    },
    attempt: attempts,
    prepared,
  });
  const at = (attempts: number) => ({
    ...state([task("t1", { status: "CLAIMED", attempts })]),
    starting: new Set(["t1"]),
  });
  const first = decide(at(1), failed(1));
  assert.deepEqual(summary(first), [
    "journal task_claimed",
    "journal task_worktree_prepared",
    "store orphan",
    "reap t1",
    "journal task_verification_failed",
    "store requeue",
    "journal task_retried",
  ]);
  const rows = first.actions.flatMap((a) => a.kind === "journal" ? [a.event] : []);
  assert.deepEqual(rows[0].data, {
    task_id: "t1",
    session_id: "s1",
    title: "Task t1",
    role: "backend",
    attempt: 1,
  });
  assert.deepEqual(rows[1].data, { task_id: "t1", session_id: "s1", ...prepared });
  assert.deepEqual(rows[2].data.signals, [{
    kind: "setup_failed",
    detail: "setup_failed: npm ci: npm ERR! 404 Not Found",
  }]);
  const requeue = first.actions.find((a) => a.kind === "store" && a.change.op === "requeue");
  assert.deepEqual(requeue, {
    kind: "store",
    change: {
      op: "requeue",
      taskId: "t1",
      reason: "setup_failed: npm ci: npm ERR! 404 Not Found (failed attempt 1 of 3; retrying)",
      countAttempt: true,
      resumeFrom: undefined,
    },
  });
  assert.equal(first.state.attemptOf.get("t1"), 1);
  const last = decide(at(3), failed(3));
  assert.ok(summary(last).includes("store give_up"));
  const reason = last.actions.find((a) => a.kind === "journal" && a.event.type === "task_failed");
  assert.equal(
    reason?.kind === "journal" && reason.event.data.reason,
    "setup_failed: npm ci: npm ERR! 404 Not Found (after 3 failed attempts)",
  );
});

Deno.test("decide(): a continuous run never finishes on its own", () => {
  const s = state([task("t1", { status: "CLOSED" })], {}, { ...SETTINGS, continuous: true });
  assert.ok(!decide(s, { type: "tick" }).actions.some((a) => a.kind === "finish"));
  const plan = state([task("t1", { status: "CLOSED" })]);
  const finish = decide(plan, { type: "tick" }).actions.find((a) => a.kind === "finish");
  assert.deepEqual(finish, { kind: "finish", verdict: { status: "completed", problems: [] } });
});

Deno.test("decide(): while the run stops, why tasks wait follows their dependencies' end", () => {
  let s = running(
    state(
      [
        task("mul", { status: "IN_PROGRESS", attempts: 1 }),
        task("dep", { status: "BLOCKED", depends_on: ["mul"] }),
        task("later", { status: "OPEN" }),
      ],
      {},
      { ...SETTINGS, maxAgents: 1 },
    ),
    "mul",
  );
  let step = decide(s, { type: "tick" });
  assert.equal(step.state.waits.get("dep"), "blocked: waits on mul (IN_PROGRESS)");
  assert.ok(step.state.waits.has("later"), "waits for a slot");
  step = decide(step.state, { type: "stop" });
  s = withStatus(step.state, "mul", "ORPHANED");
  step = decide(s, exited("mul", { exitCode: -15 }));
  step = decide(withStatus(step.state, "mul", "ORPHANED"), { type: "tick" });
  assert.equal(step.state.verdict?.status, "stopped");
  assert.deepEqual(Object.fromEntries(step.state.waits), {
    dep: "blocked: waits on mul (ORPHANED)",
  });
  const published = step.actions.find((a) => a.kind === "publish_waits");
  assert.deepEqual(published, {
    kind: "publish_waits",
    waits: { dep: "blocked: waits on mul (ORPHANED)" },
  });
});

Deno.test("decide(): settle starts what may start, says why the rest waits, and ends a finished run", () => {
  const s = state([task("t1"), task("t2", { status: "BLOCKED", depends_on: ["t1"] })]);
  let step = decide(s, { type: "settle" });
  assert.deepEqual(summary(step), ["spawn t1"]);
  assert.deepEqual(Object.fromEntries(step.state.waits), { t2: "blocked: waits on t1 (OPEN)" });
  step = decide(
    state([task("t1", { status: "CLOSED" }), task("t2", { status: "CANCELLED" })]),
    { type: "settle" },
  );
  assert.equal(step.state.verdict?.status, "completed");
});

Deno.test("decide(): a finished run names who cancelled each task — the reason it was cancelled with, else an operator", () => {
  const step = decide(
    state([
      task("t1", {
        status: "CANCELLED",
        summary: 'pull request #3 was closed by alice without merging: "not needed"',
      }),
      task("t2", { status: "CANCELLED" }),
    ]),
    { type: "settle" },
  );
  assert.deepEqual(step.state.verdict, {
    status: "completed",
    problems: [
      't1: CANCELLED — pull request #3 was closed by alice without merging: "not needed"',
      "t2: CANCELLED by an operator",
    ],
  });
});

Deno.test("decide(): an agent that starts after a stop or a cancel is ended at once; its exit records the cancel once", () => {
  const starting = (status: TaskStatus, over: Partial<CoreState> = {}) => ({
    ...state([task("t1", { status, attempts: 1 })]),
    starting: new Set(["t1"]),
    ...over,
  });
  const spawned = {
    type: "spawned" as const,
    adapter: "claude",
    taskId: "t1",
    sessionId: "s-t1",
    startedAt: 1,
    deadline: 2,
    attempt: 1,
  };
  let step = decide(starting("CLAIMED", { stopping: true }), spawned);
  assert.deepEqual(summary(step), ["journal task_claimed", "terminate t1"]);
  assert.equal(step.state.sessions.get("t1")?.endedBy, "stop");

  // Cancelled while its agent starts: the cancel waits for the start's outcome.
  step = decide(starting("CANCELLED"), {
    type: "task_changed",
    taskId: "t1",
    from: "CLAIMED",
    to: "CANCELLED",
  });
  assert.deepEqual(summary(step), []);
  step = decide(step.state, spawned);
  assert.deepEqual(summary(step), ["journal task_claimed", "terminate t1"]);
  assert.equal(step.state.sessions.get("t1")?.endedBy, "cancelled");
  step = decide(step.state, exited("t1", { exitCode: -15 }));
  assert.deepEqual(summary(step), [
    "journal agent_exited",
    "journal task_verification_failed",
    "journal task_cancelled",
    "reap t1",
  ]);
  // … or its claim was refused, or the agent could not start: the cancel is recorded then.
  step = decide(starting("CANCELLED"), { type: "claim_lost", taskId: "t1" });
  assert.deepEqual(summary(step), ["journal task_verification_failed", "journal task_cancelled"]);
  step = decide(starting("CANCELLED"), {
    type: "spawn_failed",
    taskId: "t1",
    sessionId: "s-t1",
    diagnosis: { kind: "spawn_failed", reason: "could not start the agent: boom", retryable: true },
  });
  assert.deepEqual(summary(step), [
    "reap t1",
    "journal task_verification_failed",
    "journal task_cancelled",
  ]);
  assert.equal(step.state.starting.size, 0);

  // A failure reported through the task API before the start is decided: its exit records it.
  step = decide(starting("FAILED"), {
    type: "task_changed",
    taskId: "t1",
    from: "IN_PROGRESS",
    to: "FAILED",
  });
  assert.deepEqual(summary(step), []);
});

// ---- the batch lane and parked adapters (DESIGN.md §15) --------------------------------------

/** The state with `id`'s request in the batch lane. */
function inBatch(s: CoreState, id: string): CoreState {
  return {
    ...s,
    sessions: new Map([...s.sessions, [id, {
      taskId: id,
      sessionId: `b-${id}`,
      startedAt: s.now - 5000,
      deadline: Number.POSITIVE_INFINITY,
      adapter: "claude",
      batchId: "msgbatch_1",
    }]]),
  };
}

Deno.test("decide(): batch tasks are submitted together, with no agent slot taken", () => {
  const s = state(
    [
      task("t1", { batch: true }),
      task("t2", { batch: true }),
      task("t3"),
    ],
    {},
    { ...SETTINGS, maxAgents: 1 },
  );
  const step = decide(s, { type: "settle" });
  const batch = step.actions.find((a) => a.kind === "batch") as Extract<Action, { kind: "batch" }>;
  assert.deepEqual(batch.taskIds, ["t1", "t2"]);
  assert.deepEqual(summary(step).filter((x) => x.startsWith("spawn")), ["spawn t3"]);
  assert.deepEqual([...step.state.batching].sort(), ["t1", "t2"]);
});

Deno.test("decide(): a submitted request's claim says lane batch, and names its batch", () => {
  const s = {
    ...state([task("t1", { status: "CLAIMED", attempts: 1, batch: true })]),
    starting: new Set(["t1"]),
    batching: new Set(["t1"]),
  };
  const step = decide(s, {
    type: "batch_submitted",
    taskId: "t1",
    sessionId: "b-1",
    provider: "anthropic",
    adapter: "claude",
    batchId: "msgbatch_1",
    customId: "b-1",
    startedAt: 1,
    attempt: 1,
    model: "claude-sonnet-5",
  });
  assert.deepEqual(summary(step), ["journal task_claimed", "journal task_batch_submitted"]);
  assert.equal(journaled(step, "task_claimed")[0].lane, "batch");
  assert.deepEqual(journaled(step, "task_batch_submitted")[0], {
    task_id: "t1",
    provider: "anthropic",
    batch_id: "msgbatch_1",
    custom_id: "b-1",
  });
  assert.equal(step.state.sessions.get("t1")?.batchId, "msgbatch_1");
  assert.equal(step.state.batching.size, 0);
});

Deno.test("decide(): a batch patch that applied lands like reported work", () => {
  const s = inBatch(state([task("t1", { status: "DONE", attempts: 1 })]), "t1");
  const step = decide(s, {
    type: "batch_result",
    taskId: "t1",
    sessionId: "b-t1",
    batchId: "msgbatch_1",
    outcome: "applied",
    reason: "1 file",
  });
  assert.deepEqual(summary(step), ["journal task_batch_result", "capture t1"]);
  assert.equal(step.state.sessions.size, 0);
});

/** `[outcome, the words of the reason]` of every outcome that goes to real time. */
const FALLBACK_OUTCOMES: [
  "not_applied" | "errored" | "expired" | "canceled" | "not_submitted",
  RegExp,
][] = [
  ["not_applied", /^its batch patch did not apply: git apply/],
  ["errored", /^its batch request errored/],
  ["expired", /^its batch request expired/],
  ["canceled", /^its batch request was canceled/],
  ["not_submitted", /^its batch request was not submitted/],
];

for (const [outcome, words] of FALLBACK_OUTCOMES) {
  Deno.test(`decide(): a batch request that ${outcome.replace("_", " ")} gets one real-time attempt, no attempt counted`, () => {
    const s = inBatch(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })]), "t1");
    const step = decide(s, {
      type: "batch_result",
      taskId: "t1",
      sessionId: "b-t1",
      ...(outcome === "not_submitted" ? {} : { batchId: "msgbatch_1" }),
      outcome,
      reason: outcome === "not_applied" ? "git apply --3way: patch failed" : undefined,
    });
    const requeue = requeueOf(step);
    assert.equal(requeue.countAttempt, false);
    assert.equal(requeue.resumeFrom, null);
    assert.match(requeue.reason, words);
    assert.match(requeue.reason, /one real-time attempt with the agent CLI follows/);
    assert.equal(journaled(step, "task_batch_result")[0].outcome, outcome);
    assert.match(String(journaled(step, "task_retried")[0].reason), words);
    assert.match(step.state.notes.get("t1")!, /do the task with your tools/);
    assert.equal(step.state.sessions.size, 0);
  });
}

Deno.test("decide(): a stop leaves batch requests with the provider and ends without them", () => {
  const s = inBatch(state([task("t1", { status: "CLAIMED", attempts: 1 })]), "t1");
  let step = decide(s, { type: "stop" });
  assert.ok(!summary(step).includes("terminate t1"), "no process to end");
  assert.equal(step.state.sessions.size, 0);
  step = decide(step.state, { type: "settle" });
  assert.equal(step.state.verdict?.status, "stopped");
  assert.deepEqual(step.state.verdict?.problems, [
    "t1: CLAIMED — its batch request (msgbatch_1) stays with the provider (`service run` polls it)",
  ]);
});

Deno.test("decide(): a rate limit's terminal line quotes what the CLI's JSON event said; the journal keeps the raw line", () => {
  const s = running(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })]), "t1");
  const line = JSON.stringify({
    type: "assistant",
    message: {
      model: "<synthetic>",
      content: [{
        type: "text",
        text: "API Error: Request rejected (429) · Claude AI usage limit reached|4600",
      }],
    },
    error: "rate_limit",
  });
  const step = decide(s, {
    type: "rate_limit_hit",
    taskId: "t1",
    sessionId: "s-t1",
    adapter: "claude",
    rule: "claude:usage_limit",
    line,
    until: 4600,
    named: true,
  });
  const said = logs(step).find((l) => l.includes("RateLimitError"))!;
  assert.match(said, /matched claude:usage_limit: API Error: Request rejected \(429\) · Claude AI/);
  assert.ok(!said.includes('{"type"'), said);
  assert.equal(journaled(step, "rate_limited")[0].line, line);
});

Deno.test("decide(): a parked adapter's task starts with the fallback; a rate-limited exit counts no attempt", () => {
  const settings = { ...SETTINGS, chains: { backend: ["claude", "codex"] } };
  let s = running(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })], {}, settings), "t1");
  s = { ...s, sessions: new Map([["t1", { ...s.sessions.get("t1")!, adapter: "claude" }]]) };
  let step = decide(s, {
    type: "rate_limit_hit",
    taskId: "t1",
    sessionId: "s-t1",
    adapter: "claude",
    rule: "claude:usage_limit",
    line: "You've hit your session limit · resets 3pm (UTC)",
    until: 1_000 + 3600,
    named: true,
  });
  assert.equal(journaled(step, "rate_limited")[0].reset_named, true);
  step = decide(step.state, exited("t1", { rateLimited: true }));
  const requeue = requeueOf(step);
  assert.equal(requeue.countAttempt, false);
  assert.match(
    requeue.reason,
    /claude is parked; the task goes back to the queue \(no attempt counted\)/,
  );
  const parked = withStatus({ ...step.state, parked: { claude: 3600 } }, "t1", "OPEN");
  step = decide(parked, { type: "settle" });
  const spawn = step.actions.find((a) => a.kind === "spawn") as Extract<Action, { kind: "spawn" }>;
  assert.deepEqual([spawn.taskId, spawn.adapter], ["t1", "codex"]);
  const all = decide({ ...parked, parked: { claude: 3600, codex: 10 } }, { type: "settle" });
  assert.ok(!all.actions.some((a) => a.kind === "spawn"));
  assert.match(
    all.state.waits.get("t1")!,
    /claude is parked .*\(fallback codex parked too\); back in 10s/,
  );
});

Deno.test("mergeWaitText(): a pull request's wait is said as the host's words, a local merge's with 'merge waits'", () => {
  assert.equal(
    mergeWaitText("pull request #3 waits for required check `ci/test`"),
    "pull request #3 waits for required check `ci/test`",
  );
  assert.equal(
    mergeWaitText("merge request !4 is in the merge train"),
    "merge request !4 is in the merge train",
  );
  assert.equal(
    mergeWaitText("uncommitted changes in a.txt"),
    "merge waits: uncommitted changes in a.txt",
  );
});

Deno.test("decide(): a pull request whose base moved is rebased every time, however often it moves", () => {
  let s = landing(state([task("t1", { status: "DONE", attempts: 1 })]), "t1", "merging");
  for (let i = 0; i < 5; i++) {
    const moved = decide(s, {
      type: "merge_result",
      taskId: "t1",
      result: { kind: "base_moved", reason: `main moved (${i})` },
    });
    assert.ok(moved.actions.some((a) => a.kind === "rebase"), `move ${i} rebases`);
    s = decide(moved.state, {
      type: "rebase_result",
      taskId: "t1",
      result: { kind: "rebased", tip: "abc", onto: "0b5", diffChanged: false },
    }).state;
  }
});

const STUCK = {
  kind: "waiting" as const,
  reason: "uncommitted changes in f1.txt would be overwritten: commit or stash them",
  stuck: true,
};

Deno.test("decide(): a merge only the user can unblock ends the run when nothing else can progress, with the reason; what waits for that merge is not started", () => {
  const s = landing(
    state([
      task("f1", { status: "DONE" }),
      task("f2", { depends_on: ["f1"] }),
      task("f3", { status: "BLOCKED", depends_on: ["f2"] }),
    ]),
    "f1",
    "merging",
  );
  const step = decide(s, { type: "merge_result", taskId: "f1", result: STUCK });
  const waiting = decide(step.state, { type: "settle" });
  assert.equal(waiting.state.verdict, undefined, "the user gets their minute first");
  assert.ok(
    logs(waiting).includes(
      "only merges that wait for you are left (f1): the run ends in 1m 0s unless they can land " +
        "by then (`service run` resumes them later)",
    ),
  );
  // Tried again meanwhile (still in the way): the minute is not started over.
  let later = decide({ ...waiting.state, now: s.now + 3000 }, { type: "tick" });
  assert.ok(summary(later).includes("merge f1"));
  later = decide(later.state, { type: "merge_result", taskId: "f1", result: STUCK });
  later = decide({ ...later.state, now: s.now + 59_000 }, { type: "tick" });
  assert.equal(later.state.verdict, undefined);
  later = decide(later.state, { type: "merge_result", taskId: "f1", result: STUCK });
  const settled = decide({ ...later.state, now: s.now + 60_000 }, { type: "tick" });
  assert.deepEqual(settled.state.verdict, {
    status: "failed",
    problems: [
      "f1: DONE, not merged yet — uncommitted changes in f1.txt would be overwritten: commit " +
      "or stash them (`service run` resumes)",
      "f2: not started (`service run` resumes the run)",
      "f3: BLOCKED — waits on f2 (OPEN)",
    ],
  });
  assert.ok(!summary(settled).includes("spawn f2"), "f2 waits for f1's merge");
  assert.equal(settled.state.waits.get("f1"), `merge waits: ${STUCK.reason}`);
});

Deno.test("decide(): a merge only the user can unblock keeps being tried while other work goes on, and lands once it can", () => {
  const s = running(
    landing(
      state([task("f1", { status: "DONE" }), task("f2", { status: "IN_PROGRESS" })]),
      "f1",
      "merging",
    ),
    "f2",
  );
  let step = decide(s, { type: "merge_result", taskId: "f1", result: STUCK });
  step = decide(step.state, { type: "settle" });
  assert.equal(step.state.verdict, undefined, "f2's agent still runs");
  step = decide({ ...step.state, now: s.now + 3000 }, { type: "tick" });
  assert.ok(summary(step).includes("merge f1"), "tried again");
  step = decide(step.state, {
    type: "merge_result",
    taskId: "f1",
    result: { kind: "merged", commit: "abc" },
  });
  assert.ok(summary(step).includes("journal task_merged"));
});

Deno.test("decide(): a waiting merge that comes right by itself (a branch that moved, the host's checks) keeps the run going", () => {
  const s = landing(state([task("f1", { status: "DONE" })]), "f1", "merging");
  for (
    const reason of [
      "main moved while merging (…); retry",
      "pull request #1 waits for 1 approving review",
    ]
  ) {
    let step = decide(s, {
      type: "merge_result",
      taskId: "f1",
      result: { kind: "waiting", reason },
    });
    step = decide(step.state, { type: "settle" });
    assert.equal(step.state.verdict, undefined, reason);
  }
});

Deno.test("decide(): work this run merged that the store could not record is said as merged, never 'DONE outside this run', and its dependents start", () => {
  const s = landing(
    state([task("f1", { status: "DONE" }), task("f2", { depends_on: ["f1"] })]),
    "f1",
    "merging",
  );
  const merged = decide(s, {
    type: "merge_result",
    taskId: "f1",
    result: { kind: "merged", commit: "abc" },
  });
  // The store's write failed: f1 stays DONE in the snapshot.
  const settled = decide(merged.state, { type: "settle" });
  assert.ok(summary(settled).includes("spawn f2"), "f2 starts: f1's work is on the branch");
  const ended = decide({ ...withStatus(settled.state, "f2", "CLOSED"), starting: new Set() }, {
    type: "settle",
  });
  assert.deepEqual(ended.state.verdict?.problems, [
    "f1: merged, but the task store could not record it (it still says DONE); the next " +
    "`service run` closes it from the journal",
  ]);
});

Deno.test("decide(): the host changing while a pull request's step is under way runs the step again as soon as it waits, not at the next retry", () => {
  const s = landing(state([task("t1", { status: "DONE", attempts: 1 })]), "t1", "merging");
  // A check went green after the step read the host, before the step's answer came back.
  let step = decide(s, { type: "landing_changed", taskId: "t1" });
  assert.deepEqual(summary(step), [], "the step under way is not doubled");
  const wait = {
    kind: "waiting" as const,
    reason: "pull request #1 waits for required check `ci`",
  };
  step = decide(step.state, { type: "merge_result", taskId: "t1", result: wait });
  assert.ok(summary(step).includes("merge t1"), "taken again at once");
  assert.equal(step.state.landings.get("t1")?.stage, "merging");
  // Without a change meanwhile, a wait waits (for the host, or the retry interval).
  step = decide(step.state, { type: "merge_result", taskId: "t1", result: wait });
  assert.ok(!summary(step).includes("merge t1"));
  assert.equal(step.state.landings.get("t1")?.stage, "waiting");
  step = decide(step.state, { type: "landing_changed", taskId: "t1" });
  assert.ok(summary(step).includes("merge t1"), "a waiting one is taken at once");
});

Deno.test("decide(): an agent that exits 0 without a report and left no changes is said to have changed nothing", () => {
  const s = running(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })]), "t1");
  const diagnosis = { ...crash, reason: "agent exited (exit 0) without reporting completion" };
  const step = decide(s, exited("t1", { exitCode: 0, hasWork: false, diagnosis }));
  const reason = "agent exited (exit 0) without reporting completion and changed nothing in " +
    "its worktree";
  assert.equal(requeueOf(step).reason.startsWith(reason), true, requeueOf(step).reason);
  assert.ok(logs(step).some((l) => l.includes(reason)), logs(step).join("\n"));
  // One that was ended (a timeout), or that left work, is not said to have changed nothing.
  const base = running(state([task("t1", { status: "IN_PROGRESS", attempts: 1 })]), "t1");
  const ended = new Map([["t1", { ...base.sessions.get("t1")!, endedBy: "timeout" as const }]]);
  const timedOut = decide(
    { ...base, sessions: ended },
    exited("t1", { exitCode: 0, hasWork: false, diagnosis }),
  );
  assert.ok(!requeueOf(timedOut).reason.includes("changed nothing"));
});

Deno.test("decide(): a full disk in the service's own step counts no attempt: the task keeps its work, the reason is journaled, the run stops and its other agents are ended", () => {
  const full: ExitDiagnosis = {
    kind: "disk_full",
    reason: "the disk is full: committing the agent's work failed in /w (Out of diskspace); " +
      "no attempt counted",
    retryable: true,
  };
  const two = running(
    running(
      state([
        task("t1", { status: "IN_PROGRESS", attempts: 2 }),
        task("t2", { status: "IN_PROGRESS", attempts: 0 }),
      ]),
      "t1",
    ),
    "t2",
  );
  const exitedStep = decide(two, exited("t1", { exitCode: 0, diagnosis: full }));
  assert.deepEqual(summary(exitedStep), [
    "journal agent_exited",
    "store orphan",
    "keep t1",
    "journal task_retried",
    "terminate t2",
  ]);
  assert.deepEqual(journaled(exitedStep, "task_retried"), [{ task_id: "t1", reason: full.reason }]);
  assert.equal(journaled(exitedStep, "task_verification_failed").length, 0, "no failed attempt");
  assert.equal(storeChange(exitedStep, "requeue"), undefined, "nothing counted");
  assert.equal(exitedStep.state.stopping, true);
  assert.ok(logs(exitedStep).some((l) => l.includes("the disk is full")));

  const startStep = decide(
    { ...state([task("t1", { status: "CLAIMED", attempts: 2 })]), starting: new Set(["t1"]) },
    { type: "spawn_failed", taskId: "t1", sessionId: "s", diagnosis: full },
  );
  assert.deepEqual(summary(startStep), ["store orphan", "reap t1", "journal task_retried"]);
  assert.equal(startStep.state.stopping, true);
  assert.equal(storeChange(startStep, "give_up"), undefined, "never FAILED by a full disk");
});

Deno.test("decide(): a task a full disk stopped is resumed by the next run as interrupted by it, counting no attempt", () => {
  const left = state([task("t1", {
    status: "ORPHANED",
    attempts: 1,
    summary: "the disk is full: committing the agent's work failed in /w (Out of diskspace); …",
  })]);
  const step = decide(left, {
    type: "recovered",
    taskId: "t1",
    sessionId: "s-1",
    hasWorktree: true,
    hasWork: true,
  });
  assert.deepEqual(summary(step), ["reap t1", "store requeue", "journal task_retried"]);
  const requeue = requeueOf(step);
  assert.equal(requeue.countAttempt, false);
  assert.match(
    requeue.reason,
    /^its attempt was interrupted by a full disk; a new attempt continues from its kept work \(no attempt counted\)$/,
  );
});
