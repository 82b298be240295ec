import assert from "node:assert/strict";
import { join } from "node:path";
import { canonicalJson } from "../journal/canonical_json.ts";
import { verifyJournalText } from "../journal/verify.ts";
import { foldBoard } from "./fold.ts";
import { boardAsFolded, projectJournal } from "./projection.ts";
import { GOLDEN_DIR, journalText, randomEvents, tempDir } from "../../tests/helpers.ts";
import type { JournalEvent } from "../journal/row.ts";
import { REVIEW_DECISIONS } from "../journal/event_reader.ts";
import { DECISIONS } from "./types.ts";

const golden = JSON.parse(await Deno.readTextFile(join(GOLDEN_DIR, "expected.json")));
const goldenBoard = await Deno.readTextFile(join(GOLDEN_DIR, "board.canonical.json"));

Deno.test("the golden journal folds to the exact board bytes and receipt of the independent writer", async () => {
  const projection = await projectJournal("golden", join(GOLDEN_DIR, "journal.jsonl"));
  const { receipt, board } = projection;
  assert.equal(board.parts.map((part) => new TextDecoder().decode(part)).join(""), goldenBoard);
  assert.equal(canonicalJson(boardAsFolded(projection)!.board), goldenBoard);
  assert.equal(receipt.projection_hash, golden.projection_hash);
  assert.equal(receipt.journal_head, golden.journal_head);
  assert.equal(receipt.journal_verified, true);
  assert.equal(receipt.event_count, golden.event_count);
  assert.equal(receipt.run_id, "golden");
});

function fold(events: JournalEvent[]) {
  return foldBoard(verifyJournalText(journalText(events)).rows);
}

Deno.test("foldBoard() of a journal recorded before task_merged existed has an empty merged column", () => {
  const board = fold([
    { type: "run_started", data: { run_id: "old" } },
    { type: "task_claimed", data: { task_id: "a" } },
    { type: "task_completed", data: { task_id: "a" } },
  ]);
  assert.deepEqual(board.columns.merged, []);
  assert.deepEqual(board.columns.needs_review, [{ task_id: "a", last_index: 2 }]);
  assert.deepEqual(board.run, { started: { run_id: "old" }, completed: null });
});

Deno.test("foldBoard() orders cards by the index of their last transition, ties by task id", () => {
  const rows = verifyJournalText(journalText([
    { type: "task_claimed", data: { task_id: "b" } },
    { type: "task_claimed", data: { task_id: "a" } },
    { type: "task_claimed", data: { task_id: "c" } },
    { type: "task_claimed", data: { task_id: "b" } },
  ])).rows;
  // Two rows at the same index only happen across journals; force a tie to check the tiebreak.
  rows[1].index = 0;
  const board = foldBoard(rows);
  assert.deepEqual(board.columns.running.map((c) => c.task_id), ["a", "c", "b"]);
});

Deno.test("foldBoard() ignores unknown event types, attachment rows for tasks with no card, and never reads ts", () => {
  const events: JournalEvent[] = [
    { type: "agent_heartbeat", data: { task_id: "x" } },
    { type: "task_review_decision", data: { task_id: "x", decision: "approve", principal: "p" } },
    {
      type: "task_diff_captured",
      data: { task_id: "x", sha256: "sha256:" + "1".repeat(64), added: 1, removed: 1, files: 1 },
    },
    { type: "task_claimed", data: { task_id: "y", title: "T" } },
  ];
  const board = fold(events);
  assert.equal(board.event_count, 4);
  assert.deepEqual(board.columns.running, [{ task_id: "y", last_index: 3, title: "T" }]);
  const rows = verifyJournalText(journalText(events)).rows;
  for (const r of rows) r.row.ts = "1999-01-01T00:00:00.000Z";
  assert.equal(canonicalJson(foldBoard(rows)), canonicalJson(board));
});

Deno.test("foldBoard(): approve attaches a verdict without moving; merge moves to merged; a retry keeps gates", () => {
  const board = fold([
    { type: "task_claimed", data: { task_id: "a", role: "qa" } },
    {
      type: "task_verification_failed",
      data: { task_id: "a", signals: [{ kind: "test_passes", detail: "exit 1" }] },
    },
    { type: "task_retried", data: { task_id: "a" } },
    { type: "task_claimed", data: { task_id: "b" } },
    { type: "task_completed", data: { task_id: "b" } },
    {
      type: "task_review_decision",
      data: { task_id: "b", decision: "approve", principal: "alice" },
    },
    {
      type: "task_review_decision",
      data: { task_id: "b", decision: "merge", principal: "bob", note: "ok" },
    },
  ]);
  assert.deepEqual(board.columns.queued, [{
    task_id: "a",
    last_index: 2,
    role: "qa",
    gates: [{ kind: "test_passes", detail: "exit 1" }],
  }]);
  assert.deepEqual(board.columns.merged, [{
    task_id: "b",
    last_index: 6,
    verdict: { decision: "merge", principal: "bob", index: 6, note: "ok" },
  }]);
});

Deno.test("the TypeScript fold and the independent Python fold agree on random journals", async () => {
  await using dir = await tempDir();
  const script = new URL("../../scripts/fold.py", import.meta.url).pathname;
  for (let j = 0; j < 8; j++) {
    const events = randomEvents(7 + j, 200, 12);
    const path = join(dir.path, `j${j}.jsonl`);
    await Deno.writeTextFile(path, journalText(events));
    const out = await new Deno.Command("python3", { args: [script, path] }).output();
    const python = JSON.parse(new TextDecoder().decode(out.stdout));
    const { receipt } = await projectJournal(`j${j}`, path);
    assert.equal(receipt.projection_hash, python.projection_hash, `journal ${j}`);
    assert.equal(receipt.journal_head, python.journal_head);
    assert.equal(receipt.journal_verified, python.journal_verified);
  }
});

Deno.test("the board's review decisions (lib/board/types.ts, the browser's list) are the ones the journal reader counts", () => {
  assert.deepEqual(DECISIONS, REVIEW_DECISIONS);
});
