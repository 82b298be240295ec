/** Table tests of what the decision core makes of a captured diff's judgement (DESIGN.md §18). */
import assert from "node:assert/strict";
import { decide, type Step } from "./decide.ts";
import type { Action, DiffJudgement } from "./protocol.ts";
import { type CoreSettings, type CoreState, initialState, type TaskView } from "./state.ts";
import { coreSettings } from "./_test_state.ts";

const SETTINGS = coreSettings();

function capturing(settings: CoreSettings = SETTINGS, attempts = 1): CoreState {
  const task: TaskView = {
    id: "t1",
    status: "DONE",
    title: "T1",
    role: "backend",
    priority: 2,
    seq: 1,
    owned_files: ["src/a.ts"],
    depends_on: [],
    attempts,
    summary: "done",
  };
  const s = initialState(settings, 1_000_000);
  return {
    ...s,
    tasks: new Map([["t1", task]]),
    landings: new Map([["t1", {
      taskId: "t1",
      stage: "capturing",
      reason: "capturing",
      lastTry: s.now,
      rebases: 0,
    }]]),
  };
}

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

function journaled(step: Step, type: string): Record<string, unknown>[] {
  return step.actions.flatMap((a) =>
    a.kind === "journal" && a.event.type === type ? [a.event.data] : []
  );
}

function logs(step: Step): string[] {
  return step.actions.flatMap((a) => a.kind === "log" ? [a.line] : []);
}

const judged = (over: Partial<DiffJudgement>): DiffJudgement => ({
  protected: [],
  outsideOwned: [],
  ...over,
});

Deno.test("decide(): a diff that touches protected paths waits for the board's merge, named in the journal, the wait and the log", () => {
  const step = decide(capturing(), {
    type: "captured",
    taskId: "t1",
    judged: judged({ protected: [".github/workflows/ci.yml", "service.yaml"] }),
  });
  assert.deepEqual(summary(step), ["journal task_protected_paths", "journal task_completed"]);
  assert.deepEqual(journaled(step, "task_protected_paths")[0], {
    task_id: "t1",
    paths: [".github/workflows/ci.yml", "service.yaml"],
  });
  const l = step.state.landings.get("t1")!;
  assert.equal(l.stage, "review");
  assert.match(l.reason, /changes protected paths \.github\/workflows\/ci\.yml, service\.yaml/);
  assert.match(logs(step).join("\n"), /t1: completed; it changes protected paths/);
  const merged = decide(step.state, {
    type: "review",
    taskId: "t1",
    decision: "merge",
    principal: "ann",
  });
  assert.deepEqual(summary(merged), ["merge t1"], "an operator's merge lands it");
});

Deno.test("decide(): unprotected work still merges unattended; failed gates are not held for review", () => {
  let step = decide(capturing(), { type: "captured", taskId: "t1", judged: judged({}) });
  assert.deepEqual(summary(step), ["journal task_completed", "merge t1"]);
  step = decide(capturing(), {
    type: "captured",
    taskId: "t1",
    gatesFailed: true,
    judged: judged({ protected: ["service.yaml"] }),
  });
  assert.deepEqual(summary(step), [
    "journal task_protected_paths",
    "journal task_completed",
    "merge t1",
  ]);
});

Deno.test("decide(): a diff whose paths cannot be read never lands unattended", () => {
  const step = decide(capturing(), {
    type: "captured",
    taskId: "t1",
    judged: judged({ error: "its changed paths could not be read: boom" }),
  });
  assert.deepEqual(journaled(step, "task_protected_paths")[0], {
    task_id: "t1",
    paths: [],
    error: "its changed paths could not be read: boom",
  });
  assert.equal(step.state.landings.get("t1")?.stage, "review");
});

Deno.test("decide(): owned_files left is flagged, or refused as a failed attempt under enforce_owned_files", () => {
  const outside = judged({ outsideOwned: ["README.md"] });
  let step = decide(capturing(), { type: "captured", taskId: "t1", judged: outside });
  assert.deepEqual(summary(step), [
    "journal task_owned_files_exceeded",
    "journal task_completed",
    "merge t1",
  ]);
  assert.deepEqual(journaled(step, "task_owned_files_exceeded")[0], {
    task_id: "t1",
    paths: ["README.md"],
    owned_files: ["src/a.ts"],
    enforced: false,
  });

  const enforcing = { ...SETTINGS, enforceOwnedFiles: true };
  step = decide(capturing(enforcing), { type: "captured", taskId: "t1", judged: outside });
  assert.deepEqual(summary(step), [
    "journal task_owned_files_exceeded",
    "journal task_completed",
    "reap t1",
    "journal task_verification_failed",
    "store requeue",
    "journal task_retried",
  ]);
  assert.equal(step.state.landings.has("t1"), false);
  assert.match(
    String(
      (journaled(step, "task_verification_failed")[0].signals as { detail: string }[])[0]
        .detail,
    ),
    /changes README\.md outside owned_files \(src\/a\.ts\)/,
  );
  assert.match(step.state.notes.get("t1")!, /outside the files you own \(src\/a\.ts\)/);
  step = decide(capturing(enforcing, 3), { type: "captured", taskId: "t1", judged: outside });
  assert.match(
    String(journaled(step, "task_failed")[0].reason),
    /outside its owned_files \(src\/a\.ts\) and enforce_owned_files is on/,
  );
});

Deno.test("decide(): a rebased diff is judged again: new protected paths, or a changed protected diff, wait for review", () => {
  const guarded = decide(capturing(), {
    type: "captured",
    taskId: "t1",
    judged: judged({ protected: ["service.yaml"] }),
  }).state;
  const merging = decide(guarded, {
    type: "review",
    taskId: "t1",
    decision: "merge",
    principal: "ann",
  }).state;
  const table = [
    {
      name: "same diff, same paths",
      diffChanged: false,
      protected: ["service.yaml"],
      review: false,
    },
    { name: "the diff changed", diffChanged: true, protected: ["service.yaml"], review: true },
    {
      name: "a new protected path",
      diffChanged: false,
      protected: ["CODEOWNERS", "service.yaml"],
      review: true,
    },
  ];
  for (const c of table) {
    const step = decide(merging, {
      type: "rebase_result",
      taskId: "t1",
      result: {
        kind: "rebased",
        tip: "f00",
        onto: "0b5",
        diffChanged: c.diffChanged,
        protected: c.protected,
      },
    });
    assert.equal(step.state.landings.get("t1")?.stage === "review", c.review, c.name);
    if (c.review) {
      assert.deepEqual(journaled(step, "task_protected_paths")[0].paths, c.protected, c.name);
    }
  }
  const unprotected = decide(capturing(), { type: "captured", taskId: "t1", judged: judged({}) })
    .state;
  const step = decide(unprotected, {
    type: "rebase_result",
    taskId: "t1",
    result: {
      kind: "rebased",
      tip: "f00",
      onto: "0b5",
      diffChanged: false,
      protected: ["service.yaml"],
    },
  });
  assert.equal(step.state.landings.get("t1")?.stage, "review", "a rebase that brings one in");
});

Deno.test("decide(): a diff adding a file over max_landed_file_mb waits for the board's merge, named with its size and the setting", () => {
  const step = decide(capturing(), {
    type: "captured",
    taskId: "t1",
    judged: judged({
      oversized: [{ path: "data/dump.sql", bytes: 62_914_560 }],
      limitBytes: 10_485_760,
    }),
  });
  assert.deepEqual(summary(step), ["journal task_oversized_files", "journal task_completed"]);
  assert.deepEqual(journaled(step, "task_oversized_files")[0], {
    task_id: "t1",
    files: [{ path: "data/dump.sql", bytes: 62_914_560 }],
    limit_bytes: 10_485_760,
  });
  const l = step.state.landings.get("t1")!;
  assert.equal(l.stage, "review");
  assert.equal(
    l.reason,
    "it adds or grows a file over max_landed_file_mb (10.0 MB): data/dump.sql (60.0 MB): " +
      "waiting for an operator's merge decision on the board (max_landed_file_mb)",
  );
  assert.match(logs(step).join("\n"), /t1: completed; it adds or grows a file over/);
  const merged = decide(step.state, {
    type: "review",
    taskId: "t1",
    decision: "merge",
    principal: "ann",
  });
  assert.deepEqual(summary(merged), ["merge t1"], "an operator's merge lands it");
});

Deno.test("decide(): protected paths and files over the limit together name both settings", () => {
  const step = decide(capturing(), {
    type: "captured",
    taskId: "t1",
    judged: judged({
      protected: ["service.yaml"],
      oversized: [{ path: "a.bin", bytes: 3_000_000 }, { path: "b.bin", bytes: 2_000_000 }],
      limitBytes: 1_048_576,
    }),
  });
  assert.deepEqual(summary(step), [
    "journal task_protected_paths",
    "journal task_oversized_files",
    "journal task_completed",
  ]);
  assert.match(
    step.state.landings.get("t1")!.reason,
    /changes protected path service\.yaml; it adds or grows files over max_landed_file_mb \(1\.0 MB\): a\.bin \(2\.9 MB\), b\.bin \(1\.9 MB\): .*\(protected_paths, max_landed_file_mb\)$/,
  );
});
