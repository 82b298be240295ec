import assert from "node:assert/strict";
import {
  crossCheckRun,
  type JournalFacts,
  type ReviewRow,
  type SignedEntries,
  type SignedReview,
} from "./cross_check.ts";

const H = (c: string) => c.repeat(64);
const BOUND = {
  task: "t",
  decision: "approve",
  principal: "alice",
  scope: "operator",
  note: "none",
  projection_hash: H("p"),
  diff_sha256: null,
};
const entry = (seq: number, line: string, head: string, bound = {}): SignedReview => ({
  seq,
  lineHash: H(line),
  runId: "r",
  taskId: "t",
  decision: "approve",
  journalHead: H(head),
  bound: { ...BOUND, ...bound },
});
const row = (seq: number, prev: string, cites: string, bound = {}): ReviewRow => ({
  seq,
  prev: H(prev),
  journalHead: H(prev),
  auditEventHash: H(cites),
  bound: { ...BOUND, ...bound },
});
const reviews = (...r: SignedReview[]): SignedEntries => ({ reviews: r, seals: [] });

Deno.test("crossCheckRun: agreeing chains have no findings; earlier placeholder rows are unattested", () => {
  const journal: JournalFacts = {
    hashes: new Set([H("1"), H("2"), H("3")]),
    reviews: [row(1, "9", "c"), row(3, "2", "a")],
  };
  const report = crossCheckRun("r", journal, reviews(entry(0, "a", "2")));
  assert.deepEqual(report.findings, []);
  assert.deepEqual(report.unattested, [{ runId: "r", rowSeq: 1 }]);
});

Deno.test("crossCheckRun: each kind of disagreement is named", () => {
  const journal: JournalFacts = {
    hashes: new Set([H("1"), H("2"), H("3"), H("4")]),
    reviews: [row(2, "1", "a"), row(3, "5", "b"), row(4, "3", "d")],
  };
  const report = crossCheckRun(
    "r",
    journal,
    reviews(
      entry(0, "a", "1"),
      entry(1, "b", "2"), // its row chains onto 5: re-hashed
      entry(2, "e", "4"), // no row, head on the journal: a crash between the appends
      entry(3, "f", "8"), // no row, head nowhere: rewritten
    ),
  );
  assert.deepEqual(report.findings.map((f) => [f.kind, f.rowSeq, f.auditSeq]), [
    ["rehashed_row", 3, 1],
    ["row_without_entry", 4, undefined],
    ["entry_without_row", undefined, 2],
    ["head_not_on_journal", undefined, 3],
  ]);
  assert.deepEqual(report.findings.map((f) => f.journalContradicted), [true, false, false, true]);
});

Deno.test("crossCheckRun: a row that changes any field its entry binds is a binding mismatch naming the fields", () => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ principal: "mallory" }, /records principal mallory, .*signed principal alice/],
    [{ scope: "reader" }, /records scope reader, .*signed scope operator/],
    [{ note: "sha256:" + "e".repeat(64) }, /records note sha256:e+, .*signed note none/],
    [{ decision: "merge" }, /records decision merge, .*signed decision approve/],
    [{ task: "u" }, /records task u, .*signed task t/],
    [{ projection_hash: H("q") }, /records projection_hash q+, .*signed projection_hash p+/],
    [
      { diff_sha256: "sha256:" + H("d") },
      /records diff_sha256 sha256:d+, .*signed diff_sha256 null/,
    ],
    [
      { principal: "mallory", note: "sha256:" + H("e") },
      /records principal mallory, note sha256:e+, but audit entry 0 signed principal alice, note none/,
    ],
  ];
  for (const [edit, message] of cases) {
    const journal: JournalFacts = { hashes: new Set([H("1")]), reviews: [row(1, "1", "a", edit)] };
    const [finding, ...rest] = crossCheckRun("r", journal, reviews(entry(0, "a", "1"))).findings;
    assert.equal(rest.length, 0);
    assert.equal(finding.kind, "binding_mismatch", JSON.stringify(edit));
    assert.equal(finding.rowSeq, 1);
    assert.equal(finding.journalContradicted, true);
    assert.match(finding.message, message);
  }
});

Deno.test("crossCheckRun: an entry that predates a bound field (no scope) is checked on the fields it has", () => {
  const old = entry(0, "a", "1");
  delete old.bound.scope;
  const journal: JournalFacts = { hashes: new Set([H("1")]), reviews: [row(1, "1", "a")] };
  assert.deepEqual(crossCheckRun("r", journal, reviews(old)).findings, []);
  const edited: JournalFacts = {
    hashes: new Set([H("1")]),
    reviews: [row(1, "1", "a", { principal: "mallory" })],
  };
  assert.equal(crossCheckRun("r", edited, reviews(old)).findings[0].kind, "binding_mismatch");
});

Deno.test("crossCheckRun: a seal entry without its task_evidence_sealed row is reported, a recorded one is not", () => {
  const seal = (seq: number, line: string, taskId: string) => ({
    seq,
    lineHash: H(line),
    runId: "r",
    taskId,
  });
  const journal: JournalFacts = {
    hashes: new Set([H("1")]),
    reviews: [],
    seals: [
      { seq: 3, taskId: "t", auditEventHash: H("a") },
      { seq: 5, taskId: "old" }, // written before rows cited their entry: matched by task
    ],
  };
  const report = crossCheckRun("r", journal, {
    reviews: [],
    seals: [seal(0, "a", "t"), seal(1, "b", "old"), seal(2, "c", "t")],
  });
  assert.deepEqual(report.findings.map((f) => [f.kind, f.auditSeq, f.journalContradicted]), [
    ["seal_without_row", 2, false],
  ]);
  assert.match(
    report.findings[0].message,
    /sealing stopped between the audit entry and the journal row/,
  );
});

Deno.test("crossCheckRun: a review or seal row that counts for nothing contradicts the entry that signed it whole; one no entry signed is only noted", () => {
  const journal: JournalFacts = {
    hashes: new Set([H("1"), H("2")]),
    reviews: [],
    seals: [],
    malformed: [
      {
        seq: 2,
        type: "task_review_decision",
        reason: "`principal` missing",
        auditEventHash: H("a"),
      },
      {
        seq: 3,
        type: "task_evidence_sealed",
        reason: "`bundle_hash` missing",
        auditEventHash: H("s"),
      },
      {
        seq: 4,
        type: "task_review_decision",
        reason: '`decision` "maybe" is not approve, request_changes or merge',
      },
    ],
  };
  const report = crossCheckRun("r", journal, {
    reviews: [entry(0, "a", "1")],
    seals: [{ seq: 1, lineHash: H("s"), runId: "r", taskId: "t" }],
  });
  assert.deepEqual(
    report.findings.map((f) => [f.kind, f.rowSeq, f.auditSeq, f.journalContradicted]),
    [["malformed_row", 2, 0, true], ["malformed_row", 3, 1, true]],
    "the entries have their rows: no entry_without_row, no seal_without_row",
  );
  assert.match(
    report.findings[0].message,
    /row 2 of run r is a task_review_decision that counts for nothing \(`principal` missing\), but audit entry 0 signed it whole: the row was edited after it was signed/,
  );
  assert.deepEqual(report.ignored.map((i) => i.rowSeq), [4]);
  assert.match(
    report.ignored[0].message,
    /row 4 of run r .* counts for nothing .*: the board, the run and `service status` ignore it/,
  );
  assert.deepEqual(report.unattested, []);
});
