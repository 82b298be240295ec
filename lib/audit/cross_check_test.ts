import assert from "node:assert/strict";
import { crossCheckRun, type JournalFacts, type SignedReview } from "./cross_check.ts";

const H = (c: string) => c.repeat(64);
const entry = (seq: number, line: string, head: string): SignedReview => ({
  seq,
  lineHash: H(line),
  runId: "r",
  taskId: "t",
  decision: "approve",
  journalHead: H(head),
});
const row = (seq: number, prev: string, cites: string) => ({
  seq,
  prev: H(prev),
  journalHead: H(prev),
  auditEventHash: H(cites),
  taskId: "t",
  decision: "approve",
});

Deno.test("crossCheckRun: agreeing chains have no findings; earlier placeholder rows are unattested", () => {
  const journal: JournalFacts = {
    hashes: new Set([H("1"), H("2"), H("3")]),
    reviews: [row(1, "9", "c"), row(3, "2", "a")],
  };
  const report = crossCheckRun("r", journal, [entry(0, "a", "2")]);
  assert.deepEqual(report.findings, []);
  assert.deepEqual(report.unattested, [{ runId: "r", rowSeq: 1 }]);
});

Deno.test("crossCheckRun: each kind of disagreement is named", () => {
  const journal: JournalFacts = {
    hashes: new Set([H("1"), H("2"), H("3"), H("4")]),
    reviews: [row(2, "1", "a"), row(3, "5", "b"), row(4, "3", "d")],
  };
  const report = crossCheckRun("r", journal, [
    entry(0, "a", "1"),
    entry(1, "b", "2"), // its row chains onto 5: re-hashed
    entry(2, "e", "4"), // no row, head on the journal: a crash between the appends
    entry(3, "f", "8"), // no row, head nowhere: rewritten
  ]);
  assert.deepEqual(report.findings.map((f) => [f.kind, f.rowSeq, f.auditSeq]), [
    ["rehashed_row", 3, 1],
    ["row_without_entry", 4, undefined],
    ["entry_without_row", undefined, 2],
    ["head_not_on_journal", undefined, 3],
  ]);
  assert.deepEqual(report.findings.map((f) => f.journalContradicted), [true, false, false, true]);
});
