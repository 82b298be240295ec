import assert from "node:assert/strict";
import * as ev from "../journal/events.ts";
import type { JournalEvent } from "../journal/row.ts";
import { outcomeOf, RUN_TRAIL_SINK, runStatusOf } from "./trail.ts";

function trailOf(rows: JournalEvent[]) {
  const state = RUN_TRAIL_SINK.init();
  rows.forEach((row, i) => RUN_TRAIL_SINK.apply(state, row, i));
  return outcomeOf(state);
}

const planned = (ids: [string, string[]][]) =>
  ev.runStarted({
    run_id: "r",
    planned: ids.map(([task_id, depends_on]) => ({
      task_id,
      title: task_id,
      role: "b",
      depends_on,
    })),
  });
const landed = (id: string) => [
  ev.taskClaimed({ task_id: id, session_id: `s-${id}` }),
  ev.taskCompleted({ task_id: id }),
  ev.taskMerged({ task_id: id }),
];
const failed = (id: string) => [
  ev.taskClaimed({ task_id: id, session_id: `s-${id}` }),
  ev.taskVerificationFailed({ task_id: id, signals: [{ kind: "test_passes", detail: "x" }] }),
  ev.taskFailed({ task_id: id, reason: "tests failed" }),
];
const cancel = (id: string) => [
  ev.taskVerificationFailed({ task_id: id, signals: [{ kind: "cancelled", detail: "c" }] }),
  ev.taskCancelled({ task_id: id, reason: "cancelled by an operator" }),
];
const end = (status: "completed" | "failed" | "stopped") =>
  ev.runCompleted({ run_id: "r", status });

const CASES: [string, JournalEvent[], boolean, string][] = [
  ["a live process runs it", [planned([["a", []]])], true, "running"],
  ["no run_completed and no process: interrupted", [planned([["a", []]])], false, "interrupted"],
  [
    "what it said when nothing moved since",
    [planned([["a", []]]), ...failed("a"), end("failed")],
    false,
    "failed",
  ],
  [
    "its only failed task cancelled after it ended: completed",
    [
      planned([["a", []], ["b", []]]),
      ...landed("b"),
      ...failed("a"),
      end("failed"),
      ...cancel("a"),
    ],
    false,
    "completed",
  ],
  [
    "its failed task retried after it ended: resumable",
    [
      planned([["a", []]]),
      ...failed("a"),
      end("failed"),
      ev.taskRetried({ task_id: "a", reason: "retried by an operator" }),
    ],
    false,
    "resumable",
  ],
  [
    "a failed task cancelled frees its dependent: resumable",
    [planned([["a", []], ["b", ["a"]]]), ...failed("a"), end("failed"), ...cancel("a")],
    false,
    "resumable",
  ],
  [
    "one of two failed tasks cancelled, the other still blocks its dependent: failed",
    [
      planned([["a", []], ["b", []], ["c", ["a"]]]),
      ...failed("a"),
      ...failed("b"),
      end("failed"),
      ...cancel("b"),
    ],
    false,
    "failed",
  ],
  [
    "a stopped run whose tasks were all cancelled: completed",
    [
      planned([["a", []]]),
      ev.taskClaimed({ task_id: "a", session_id: "s" }),
      end("stopped"),
      ...cancel("a"),
    ],
    false,
    "completed",
  ],
  [
    "a resumed run whose process died: interrupted",
    [planned([["a", []]]), end("stopped"), ev.runResumed({ run_id: "r", pid: 1 })],
    false,
    "interrupted",
  ],
];

for (const [name, rows, live, expected] of CASES) {
  Deno.test(`runStatusOf(): ${name}`, () => {
    assert.equal(runStatusOf(trailOf(rows), live), expected);
  });
}

Deno.test("outcomeOf() counts FAILED and CANCELLED tasks apart; a retry or a merge takes them back", () => {
  const rows = [
    planned([["a", []], ["b", []], ["c", []], ["d", []]]),
    ...failed("a"),
    ...cancel("b"),
    ...failed("c"),
    ev.taskRetried({ task_id: "c" }),
    ...cancel("d"),
    ev.taskReviewDecision({
      task_id: "d",
      decision: "merge",
      principal: "p",
      scope: "operator",
      projection_hash: "h",
      journal_head: "h",
      diff_sha256: "sha256:x",
      audit_event_hash: "h",
    }),
  ];
  const outcome = trailOf(rows);
  assert.equal(outcome.failed, 1);
  assert.equal(outcome.cancelled, 1);
  assert.equal(outcome.runnable, 1, "c, retried");
});

Deno.test("runStatusOf(): a journal that does not verify is unverified whatever its rows say, unless a live process runs it", () => {
  const damage = {
    kind: "torn_tail" as const,
    line: 3,
    verified_lines: 2,
    words: "its last line (3) is torn: cut off before its end; lines 1–2 verify",
  };
  for (
    const rows of [[planned([["a", []]])], [planned([["a", []]]), ...landed("a"), end("completed")]]
  ) {
    assert.equal(runStatusOf({ ...trailOf(rows), damage }, false), "unverified");
    assert.equal(runStatusOf({ ...trailOf(rows), damage }, true), "running");
  }
});
