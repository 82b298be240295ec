/**
 * Every part that reads a run's journal takes the same rows as counting and ignores the same
 * rows as malformed (lib/journal/event_reader.ts): one catalogue of good and bad rows is written
 * as real journal files and fed to the board fold, the independent fold (scripts/fold.py), the
 * activity view, the review watcher, the audit cross-check, the runs trail and tracker
 * write-back. Before the one reader, the fold dropped a merge decision without a principal while
 * the activity view and the runs trail still said the task merged.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { boardOf } from "../lib/board/fold.ts";
import { boardBytes } from "../lib/board/board_bytes.ts";
import { BOARD_FOLD_SINK } from "../lib/board/sink.ts";
import { ACTIVITY_SINK, type ActivityState } from "../lib/board/activity.ts";
import { ReviewWatcher } from "../lib/orchestrator/review_watcher.ts";
import { crossCheckRun, journalFacts } from "../lib/audit/cross_check.ts";
import { RUN_TRAIL_SINK } from "../lib/runs/trail.ts";
import { findMergeCommit } from "../lib/trackers/write_back.ts";
import { IncrementalJournal, type RowSink } from "../lib/journal/incremental.ts";
import { readJournal } from "../lib/journal/journal_file.ts";
import { encodeRow, type JournalEvent } from "../lib/journal/row.ts";
import { sha256Hex, ZERO_HASH } from "../lib/journal/hash.ts";
import type { JsonValue } from "../lib/journal/canonical_json.ts";
import type { WorkspacePaths } from "../lib/workspace.ts";
import { goldenWorkspace, tempDir } from "./helpers.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import { runOutline } from "../lib/review/activity.ts";
import { auditCrossCheckResults } from "../lib/audit/doctor_check.ts";
import { workspacePaths } from "../lib/workspace.ts";

const FOLD_PY = new URL("../scripts/fold.py", import.meta.url).pathname;
const TS = "2026-11-21T10:00:00.000Z";
const H = (c: string) => c.repeat(64);

/** A catalogue row: its type and its data, as an object or as raw JSON text (no canonical form). */
interface Case {
  name: string;
  type: string;
  data: JsonValue | { raw: string };
  counts: boolean;
}

const CLAIM = { task_id: "t", session_id: "s-2", title: "T2", role: "r" };
const REVIEW = {
  task_id: "t",
  principal: "alice",
  scope: "operator",
  projection_hash: H("a"),
  journal_head: H("b"),
  diff_sha256: null,
  audit_event_hash: H("c"),
};
const DIFF = { task_id: "t", sha256: "sha256:" + H("d"), added: 2, removed: 1, files: 1 };
const PLAN = { run_id: "r", planned: [{ task_id: "p", title: "P", role: "r", depends_on: ["t"] }] };
const SEALED = { task_id: "t", bundle_hash: H("e"), audit_event_hash: H("f") };
const EXITED = { task_id: "t", session_id: "s-1", exit_code: 0, duration_ms: 5 };
const PR = { task_id: "t", number: 12, url: "https://example.test/pr/12", head_sha: H("1") };

const good = (name: string, type: string, data: Case["data"]): Case => ({
  name,
  type,
  data,
  counts: true,
});
const bad = (name: string, type: string, data: Case["data"]): Case => ({
  name,
  type,
  data,
  counts: false,
});

/** The catalogue: every reader must count the good rows and ignore the bad ones. */
const CASES: Case[] = [
  good("a run's start with its plan", "run_started", PLAN),
  bad("a run's start holding a non-integer", "run_started", {
    raw: '{"planned":[{"depends_on":["t"],"task_id":"p"}],"run_id":"r","x":1.5}',
  }),
  bad("a run's start holding an unsafe integer", "run_started", {
    raw: '{"planned":[{"depends_on":["t"],"task_id":"p"}],"run_id":"r","x":1152921504606846976}',
  }),
  good("a run's end", "run_completed", { run_id: "r", status: "completed" }),
  bad("a run's end holding a non-integer", "run_completed", {
    raw: '{"run_id":"r","status":"failed","took":0.5}',
  }),
  good("a claim", "task_claimed", CLAIM),
  good("a claim with only a task id", "task_claimed", { task_id: "t" }),
  good("a claim with extra fields", "task_claimed", { ...CLAIM, later: { field: [1, "x"] } }),
  good("a claim whose title is a number (read as absent)", "task_claimed", { ...CLAIM, title: 5 }),
  bad("a claim whose data is null", "task_claimed", null),
  bad("a claim whose data is an array", "task_claimed", ["t"]),
  bad("a claim whose data is a string", "task_claimed", "t"),
  bad("a claim without a task id", "task_claimed", { session_id: "s-2" }),
  bad("a claim whose task id is a number", "task_claimed", { ...CLAIM, task_id: 7 }),
  bad("a claim whose task id is null", "task_claimed", { ...CLAIM, task_id: null }),
  bad("a claim whose task id is a list", "task_claimed", { ...CLAIM, task_id: ["t"] }),
  good("failed gates", "task_verification_failed", {
    task_id: "t",
    signals: [{ kind: "test_passes", detail: "exit 1" }],
  }),
  good("failed gates whose signals are not a list", "task_verification_failed", {
    task_id: "t",
    signals: "oops",
  }),
  good("failed gates whose signals hold a non-integer", "task_verification_failed", {
    raw: '{"signals":[{"detail":"d","kind":"k","score":0.5}],"task_id":"t"}',
  }),
  bad("failed gates without a task id", "task_verification_failed", { signals: [] }),
  good("a retry", "task_retried", { task_id: "t", reason: "again" }),
  bad("a retry whose task id is a number", "task_retried", { task_id: 7 }),
  good("a completion", "task_completed", { task_id: "t", summary: "done" }),
  bad("a completion without a task id", "task_completed", { summary: "done" }),
  good("a merge", "task_merged", { task_id: "t", commit: H("9") }),
  good("a merge whose commit is a number (read as absent)", "task_merged", {
    task_id: "t",
    commit: 5,
  }),
  bad("a merge whose task id is an object", "task_merged", { task_id: {} }),
  good("a diff", "task_diff_captured", DIFF),
  bad("a diff whose count is a string", "task_diff_captured", { ...DIFF, added: "2" }),
  bad("a diff without its digest", "task_diff_captured", { ...DIFF, sha256: undefined! }),
  bad("a diff whose count is not an integer", "task_diff_captured", {
    raw: `{"added":2,"files":1.5,"removed":1,"sha256":"sha256:${H("d")}","task_id":"t"}`,
  }),
  good("an approval", "task_review_decision", { ...REVIEW, decision: "approve", note: "ok" }),
  good("a merge decision", "task_review_decision", { ...REVIEW, decision: "merge" }),
  good("a merge decision whose note is a number (read as absent)", "task_review_decision", {
    ...REVIEW,
    decision: "merge",
    note: 5,
  }),
  bad("a merge decision without a principal", "task_review_decision", {
    ...REVIEW,
    decision: "merge",
    principal: undefined!,
  }),
  bad("an approval without a principal", "task_review_decision", {
    ...REVIEW,
    decision: "approve",
    principal: undefined!,
  }),
  bad("a merge decision whose principal is a number", "task_review_decision", {
    ...REVIEW,
    decision: "merge",
    principal: 7,
  }),
  bad("an unknown decision", "task_review_decision", { ...REVIEW, decision: "maybe" }),
  bad("a decision missing", "task_review_decision", REVIEW),
  bad("a decision that is a list", "task_review_decision", { ...REVIEW, decision: ["merge"] }),
  bad("a merge decision without a task id", "task_review_decision", {
    ...REVIEW,
    decision: "merge",
    task_id: undefined!,
  }),
  good("a cancel", "task_cancelled", { task_id: "t", reason: "no longer wanted" }),
  bad("a cancel whose task id is a number", "task_cancelled", { task_id: 7, reason: "x" }),
  good("a sealed evidence bundle", "task_evidence_sealed", SEALED),
  bad("a sealed bundle without its hash", "task_evidence_sealed", {
    ...SEALED,
    bundle_hash: undefined!,
  }),
  bad("a sealed bundle whose hash is a number", "task_evidence_sealed", {
    ...SEALED,
    bundle_hash: 5,
  }),
  good("an agent's exit", "agent_exited", EXITED),
  bad("an agent's exit whose code is a string", "agent_exited", { ...EXITED, exit_code: "0" }),
  bad("an agent's exit without its session", "agent_exited", { ...EXITED, session_id: undefined! }),
  good("a pull request opened", "task_pr_opened", PR),
  bad("a pull request whose number is a string", "task_pr_opened", { ...PR, number: "12" }),
];

/** The readers of each row type (a reader that does not read a type is not asked). */
const READERS: Record<string, string[]> = {
  run_started: ["board", "activity", "trail"],
  run_completed: ["board", "trail"],
  task_claimed: ["board", "activity", "trail"],
  task_verification_failed: ["board", "activity"],
  task_retried: ["board", "activity", "trail"],
  task_completed: ["board", "activity", "trail"],
  task_merged: ["board", "activity", "trail", "write-back"],
  task_diff_captured: ["board", "activity"],
  task_review_decision: ["board", "activity", "watcher", "cross-check"],
  task_cancelled: ["activity", "trail"],
  task_evidence_sealed: ["activity", "cross-check"],
  agent_exited: ["activity"],
  task_pr_opened: ["activity"],
};

/** Rows before the one under test: task t claimed as s-1, then failed. */
const PREFIX: JournalEvent[] = [
  { type: "task_claimed", data: { task_id: "t", session_id: "s-1", title: "T", role: "r" } },
  { type: "task_failed", data: { task_id: "t", reason: "earlier" } },
];

/** The journal line of `c` at `seq` after `prev` (a raw row is hashed as written: it does not verify). */
function lineOf(c: Case, prev: string, seq: number): { line: string; hash: string } {
  if (c.data !== null && typeof c.data === "object" && "raw" in c.data) {
    const body =
      `{"data":${c.data.raw},"prev":"${prev}","seq":${seq},"ts":"${TS}","type":"${c.type}","v":1}`;
    const hash = sha256Hex(body);
    return { line: body.replace(`,"prev"`, `,"hash":"${hash}","prev"`), hash };
  }
  const data = JSON.parse(JSON.stringify(c.data)) as Record<string, JsonValue>; // drops undefined
  return encodeRow({ type: c.type, data }, { prev, seq, ts: TS });
}

function prefixLines(): { lines: string[]; head: string } {
  const lines: string[] = [];
  let head = ZERO_HASH;
  for (const [seq, event] of PREFIX.entries()) {
    const row = encodeRow(event, { prev: head, seq, ts: TS });
    lines.push(row.line);
    head = row.hash;
  }
  return { lines, head };
}

async function fold<S>(path: string, sink: RowSink<S>): Promise<S> {
  return (await readJournal(path, new IncrementalJournal(sink))).state;
}

/** A reader's view of a journal, comparable as a string. */
const VIEWS: Record<string, (path: string) => Promise<string>> = {
  board: async (path) => {
    const { event_count: _, ...board } = boardOf(await fold(path, BOARD_FOLD_SINK));
    return JSON.stringify(board);
  },
  activity: async (path) => {
    const { ignored: _i, ignored_count: _c, ...state } = await fold(path, ACTIVITY_SINK);
    return JSON.stringify({ ...state, tasks: [...state.tasks] });
  },
  trail: async (path) => {
    const trail = await fold(path, RUN_TRAIL_SINK);
    return JSON.stringify({ ...trail, tasks: [...trail.tasks], dependsOn: [...trail.dependsOn] });
  },
};

Deno.test("every journal reader counts the same rows and ignores the same malformed rows", async () => {
  await using dir = await tempDir("journal-readers-");
  const runs = join(dir.path, "runs");
  const { lines, head } = prefixLines();
  const seq = PREFIX.length;
  await Deno.mkdir(join(runs, "before"), { recursive: true });
  const before = join(runs, "before", "journal.jsonl");
  await Deno.writeTextFile(before, lines.join("\n") + "\n");
  const baseline: Record<string, string> = {};
  for (const [name, view] of Object.entries(VIEWS)) baseline[name] = await view(before);

  const disagreements: string[] = [];
  for (const [i, c] of CASES.entries()) {
    const runId = `case-${i}`;
    await Deno.mkdir(join(runs, runId));
    const path = join(runs, runId, "journal.jsonl");
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    const watcher = new ReviewWatcher(path);
    await watcher.start();
    const text = [...lines, lineOf(c, head, seq).line].join("\n") + "\n";
    await Deno.writeTextFile(path, text);

    const counted: Record<string, boolean> = {};
    for (const [name, view] of Object.entries(VIEWS)) {
      counted[name] = (await view(path)) !== baseline[name];
    }
    counted.watcher = (await watcher.newDecisions()).some((d) => d.index === seq);
    const facts = journalFacts(text);
    counted["cross-check"] = [...facts.reviews, ...facts.seals ?? []].some((r) => r.seq === seq);
    counted["write-back"] =
      (await findMergeCommit({ runs } as WorkspacePaths, "t"))?.runId === runId;
    await Deno.remove(join(runs, runId), { recursive: true }); // write-back reads every run

    for (const reader of READERS[c.type]) {
      if (c.type === "task_review_decision" && reader === "trail") continue;
      if (counted[reader] !== c.counts) {
        disagreements.push(`${c.name}: ${reader} ${counted[reader] ? "counts" : "ignores"} it`);
      }
    }
    // A merge decision that counts ends the task's trail as landed; one that does not, does not.
    if (
      c.type === "task_review_decision" && (c.data as { decision?: unknown }).decision === "merge"
    ) {
      if (counted.trail !== c.counts) {
        disagreements.push(`${c.name}: trail ${counted.trail ? "counts" : "ignores"} it`);
      }
    }
  }
  assert.deepEqual(disagreements, []);
});

Deno.test("the views that show a run say which rows they ignored, and why", async () => {
  await using dir = await tempDir("journal-readers-");
  const { lines, head } = prefixLines();
  for (const c of CASES) {
    const path = join(dir.path, "journal.jsonl");
    await Deno.writeTextFile(
      path,
      [...lines, lineOf(c, head, PREFIX.length).line].join("\n") + "\n",
    );
    const activity: ActivityState = await fold(path, ACTIVITY_SINK);
    const listed = activity.ignored.find((r) => r.index === PREFIX.length);
    // A row whose data is not an object never reaches a reader: the journal does not verify there.
    const reaches = c.data !== null && typeof c.data === "object" && !Array.isArray(c.data);
    assert.equal(Boolean(listed), !c.counts && reaches, c.name);
    if (listed) {
      assert.equal(listed.type, c.type, c.name);
      assert.match(
        listed.reason,
        /`[a-z_0-9]+` (missing|is |holds)|`decision` ".*" is not|no canonical form/,
        c.name,
      );
    }
    if (c.type === "task_review_decision" || c.type === "task_evidence_sealed") {
      const report = crossCheckRun("r", journalFacts(await Deno.readTextFile(path)), {
        reviews: [],
        seals: [],
      });
      const noted = report.ignored.find((r) => r.rowSeq === PREFIX.length);
      assert.equal(Boolean(noted), !c.counts && reaches, c.name);
      if (noted) assert.match(noted.message, /counts for nothing \(.+\): the board/);
    }
  }
});

Deno.test("scripts/fold.py folds every catalogue journal to the same board bytes", async () => {
  await using dir = await tempDir("journal-readers-");
  const { lines, head } = prefixLines();
  const ours: string[] = [];
  const paths: string[] = [];
  for (const [i, c] of CASES.entries()) {
    const path = join(dir.path, `${i}.jsonl`);
    await Deno.writeTextFile(
      path,
      [...lines, lineOf(c, head, PREFIX.length).line].join("\n") + "\n",
    );
    const { parts } = boardBytes(await fold(path, BOARD_FOLD_SINK));
    ours.push(parts.map((part) => new TextDecoder().decode(part)).join(""));
    paths.push(path);
  }
  // One interpreter folds them all (scripts/fold.py's own fold()).
  const script = "import json, sys; sys.path.insert(0, sys.argv[1]); from fold import fold; " +
    "print(json.dumps([fold(p)[1]['projection_hash'] for p in sys.argv[2:]]))";
  const out = await new Deno.Command("python3", {
    args: ["-c", script, dirname(FOLD_PY), ...paths],
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const theirs: string[] = JSON.parse(new TextDecoder().decode(out.stdout));
  const differ = CASES.flatMap((c, i) =>
    sha256Hex(ours[i]) === theirs[i] ? [] : [`${c.name}: ours ${ours[i]}`]
  );
  assert.deepEqual(differ, []);
});

Deno.test("a malformed merge decision appended to a run: the page, doctor and the run trail ignore it and say so", async () => {
  await using ws = await goldenWorkspace();
  const paths = workspacePaths(ws.path);
  const [row] = await appendEvents(join(ws.runDir, "journal.jsonl"), [{
    type: "task_review_decision",
    data: { task_id: "t-docs", decision: "merge", note: "no principal" },
  }]);
  const outline = await runOutline(paths, "golden");
  assert.equal(outline.journal_verified, true);
  assert.deepEqual(outline.ignored_rows, {
    count: 1,
    rows: [{
      index: row.seq,
      type: "task_review_decision",
      reason: "`principal` missing",
      task_id: "t-docs",
    }],
  });
  assert.notEqual(outline.tasks.find((t) => t.task_id === "t-docs")?.state, "merged");
  const trail = await fold(join(ws.runDir, "journal.jsonl"), RUN_TRAIL_SINK);
  assert.equal(trail.tasks.get("t-docs"), "open");
  const doctor = await auditCrossCheckResults(paths);
  assert.deepEqual(doctor.map((r) => [r.ok, r.warning]), [[true, true]]);
  assert.match(
    doctor[0].detail,
    new RegExp(
      `row ${row.seq} of run golden is a task_review_decision that counts for nothing ` +
        "\\(`principal` missing\\): the board, the run and `service status` ignore it",
    ),
  );
});
