/**
 * The board's bytes (./board_bytes.ts, written card by card from the fold's table) are exactly
 * the bytes of the algorithm they replaced — a map of card objects, the board copied out of it,
 * one canonical JSON of the whole — and of CPython's scripts/fold.py, on a catalogue of hostile
 * journals and on random ones. The replaced algorithm lives here only, as the reference.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import {
  canonicalJsonExact,
  compareCodePoints,
  type JsonValue,
} from "../journal/canonical_json.ts";
import { sha256Hex, ZERO_HASH } from "../journal/hash.ts";
import { IncrementalJournal, type RowSink } from "../journal/incremental.ts";
import type { JournalEvent } from "../journal/row.ts";
import { readEvent } from "../journal/event_reader.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";
import { boardBytes, PART_BYTES } from "./board_bytes.ts";
import { boardOf, foldRows } from "./fold.ts";
import type { Board, Card, CardVerdict, Column } from "./types.ts";
import { journalText, randomEvents, tempDir } from "../../tests/helpers.ts";

type Row = { index: number; row: JournalEvent };

/** The fold as it was before the table: a map of card objects (the reference). */
function referenceBoard(rows: Row[]): Board {
  let started: JsonValue | null = null, completed: JsonValue | null = null;
  const cards = new Map<string, { card: Card; column: Column }>();
  const move = (id: string, column: Column, index: number) => {
    let entry = cards.get(id);
    if (!entry) cards.set(id, entry = { card: { task_id: id, last_index: index }, column });
    entry.column = column;
    entry.card.last_index = index;
    return entry;
  };
  const MOVES: Record<string, Column> = {
    task_claimed: "running",
    task_verification_failed: "gated",
    task_retried: "queued",
    task_completed: "needs_review",
    task_merged: "merged",
  };
  for (const { index, row } of rows) {
    // deno-lint-ignore no-explicit-any
    const e = readEvent(row) as any;
    if (!e) continue;
    if (e.type === "run_started" && started === null) started = e.data;
    if (e.type === "run_completed") completed = e.data;
    if (MOVES[e.type]) {
      const { card } = move(e.task_id, MOVES[e.type], index);
      if (e.type === "task_claimed" && e.title !== undefined) card.title = e.title;
      if (e.type === "task_claimed" && e.role !== undefined) card.role = e.role;
      if (e.type === "task_verification_failed" && e.signals) card.gates = e.signals;
    }
    if (e.type === "task_diff_captured") {
      const entry = cards.get(e.task_id);
      const { sha256, added, removed, files } = e;
      if (entry) entry.card.diff = { sha256, added, removed, files };
    }
    if (e.type === "task_review_decision") {
      const entry = e.decision === "merge"
        ? move(e.task_id, "merged", index)
        : cards.get(e.task_id);
      const verdict: CardVerdict = { decision: e.decision, principal: e.principal, index };
      if (e.note !== undefined) verdict.note = e.note;
      if (entry) entry.card.verdict = verdict;
    }
  }
  // The board copied out of the map as the replaced `boardOf` did: keys in sorted order.
  const columns = { gated: [], merged: [], needs_review: [], queued: [], running: [] } as Record<
    Column,
    Card[]
  >;
  for (const { card, column } of cards.values()) {
    const copy = {} as Card;
    if (card.diff) {
      const { added, files, removed, sha256 } = card.diff;
      copy.diff = { added, files, removed, sha256 };
    }
    if (card.gates) copy.gates = card.gates;
    copy.last_index = card.last_index;
    if (card.role !== undefined) copy.role = card.role;
    copy.task_id = card.task_id;
    if (card.title !== undefined) copy.title = card.title;
    if (card.verdict) {
      const v = card.verdict;
      copy.verdict = { decision: v.decision, index: v.index } as CardVerdict;
      if (v.note !== undefined) copy.verdict.note = v.note;
      copy.verdict.principal = v.principal;
    }
    columns[column].push(copy);
  }
  for (const list of Object.values(columns)) {
    list.sort((a, b) => a.last_index - b.last_index || compareCodePoints(a.task_id, b.task_id));
  }
  return {
    columns,
    event_count: rows.length,
    run: { completed, started },
    schema_version: 1,
  };
}

/** Records the rows a board fold sees, as it sees them. */
const RECORD: RowSink<Row[]> = {
  init: () => [],
  apply: (rows, row, index) => void rows.push({ index, row: structuredClone(row) }),
  clone: (rows) => [...rows],
};

const text = (parts: Uint8Array[]) => parts.map((p) => new TextDecoder().decode(p)).join("");

/** New bytes, reference bytes and hashes of a journal's bytes. */
function bothWays(bytes: Uint8Array) {
  const state = new IncrementalJournal(BOARD_FOLD_SINK).update(bytes).state;
  const rows = new IncrementalJournal(RECORD).update(bytes).state;
  const ours = boardBytes(state);
  assert.equal(ours.length, ours.parts.reduce((n, p) => n + p.length, 0));
  for (const part of ours.parts.slice(0, -1)) assert.equal(part.length, PART_BYTES);
  const board = referenceBoard(rows);
  // What a review action answers (JSON.stringify of the board's objects) is unchanged too.
  assert.equal(JSON.stringify(boardOf(state)), JSON.stringify(board));
  return {
    ours: text(ours.parts),
    sha256: ours.sha256,
    reference: canonicalJsonExact(board),
    state,
  };
}

/** A chained line with `data` (and the row's keys) in the order given: valid, not canonical. */
function rawLine(type: string, data: unknown, seq: number, prev: string) {
  const body = { data, prev, seq, ts: "2026-01-01T00:00:00Z", type, v: 1 };
  const hash = sha256Hex(canonicalJsonExact(body));
  return { line: JSON.stringify({ type, seq, data, ts: body.ts, v: 1, prev, hash }), hash };
}

/** Journal text of (type, data) pairs written with their keys in the order given. */
function rawJournal(events: [string, unknown][]): string {
  let prev = ZERO_HASH;
  const lines = events.map(([type, data], seq) => {
    const made = rawLine(type, data, seq, prev);
    prev = made.hash;
    return made.line;
  });
  return lines.map((l) => l + "\n").join("");
}

const SHA = "sha256:" + "ab".repeat(32);
const claim = (task_id: string, more: Record<string, unknown> = {}): [string, unknown] => [
  "task_claimed",
  { task_id, ...more },
];

/** Hostile journals (their text); each is folded both ways and by CPython. */
const CATALOGUE: Record<string, string> = {
  "empty journal": "",
  "non-ASCII, astral and control titles": rawJournal([
    ["run_started", { run_id: "r\u00e9", plan: "\u{1F680}" }],
    claim("t\u00e9", { title: "Caf\u00e9 \u2603 \u{1F600}", role: "r\u00f4le" }),
    claim("t\u{1F600}", { title: 'tab\there "q" \\ \x7f \x01 \u2028', role: "" }),
    claim("plain", { title: "" }),
  ]),
  "lone surrogates in titles and ids": rawJournal([
    claim("s\ud800", { title: "half \udc00 pair \ud83d", role: "\udfff" }),
    claim("s\udbff\udfff", { title: "\ud83d\ude00" }),
    ["task_completed", { task_id: "s\ud800" }],
  ]),
  "gates whose keys are out of order": rawJournal([
    claim("g1", { title: "G" }),
    ["task_verification_failed", {
      task_id: "g1",
      signals: [{ kind: "t", detail: "x", a: [{ z: 1, b: { y: 2, c: 3 } }] }, "s", 3, null],
    }],
    claim("g2"),
    ["task_verification_failed", { task_id: "g2", signals: [{ "10": "a", "9": "b", "x": 1 }] }],
    claim("g3"),
    ["task_verification_failed", { task_id: "g3", signals: [{ "\u{1F600}": 1, "\uffff": 2 }] }],
    ["task_retried", { task_id: "g1" }],
  ]),
  "nested run data, started twice, completed twice": rawJournal([
    ["run_started", { z: 1, a: { y: [2, { q: "\u00e9", b: true }], b: null } }],
    ["run_started", { second: true }],
    ["run_completed", { status: "failed", data: { n: -3 } }],
    ["run_completed", { status: "done", zeta: "\u{1F680}", alpha: [] }],
  ]),
  "unknown event types and rows the board does not count": rawJournal([
    ["agent_heartbeat", { task_id: "u" }],
    ["some_future_row", { task_id: "u", title: "x" }],
    ["task_claimed", { title: "no task id" }],
    ["task_review_decision", { task_id: "u", decision: "veto", principal: "p" }],
    ["task_diff_captured", { task_id: "u", sha256: SHA, added: "1", removed: 0, files: 1 }],
    claim("u", { title: 7, role: ["x"] }),
  ]),
  "attachment rows before a card exists": rawJournal([
    ["task_diff_captured", { task_id: "a", sha256: SHA, added: 1, removed: 2, files: 3 }],
    ["task_review_decision", { task_id: "a", decision: "approve", principal: "p", note: "n" }],
    claim("a", { title: "A" }),
    ["task_completed", { task_id: "a" }],
    ["task_diff_captured", { task_id: "b", sha256: SHA, added: 4, removed: 5, files: 6 }],
    claim("b"),
    ["task_diff_captured", {
      task_id: "b",
      sha256: "sha256:\u00e9",
      added: 0,
      removed: 0,
      files: 0,
    }],
    ["task_review_decision", { task_id: "c", decision: "merge", principal: "\u00e9ve" }],
    ["task_review_decision", { task_id: "a", decision: "request_changes", principal: "p" }],
    ["task_merged", { task_id: "a" }],
  ]),
  "every column but one empty": rawJournal([claim("only")]),
  "titles and diffs set again, to the same, other and empty text": rawJournal([
    claim("r", { title: "One", role: "a" }),
    claim("r", { title: "One", role: "ab" }),
    claim("r", { title: "Two" }),
    claim("r", { title: "" }),
    claim("q", { title: "" }),
    ["task_diff_captured", { task_id: "r", sha256: SHA, added: 1, removed: 2, files: 3 }],
    ["task_diff_captured", { task_id: "r", sha256: SHA, added: 4, removed: 5, files: 6 }],
    ["task_diff_captured", { task_id: "q", sha256: "", added: 0, removed: 0, files: 0 }],
    claim("r", { title: "One", role: "a" }),
  ]),
  "torn tail (a complete last line without its newline)": rawJournal([
    claim("t1"),
    ["task_completed", { task_id: "t1" }],
  ]).slice(0, -1),
  "torn tail (half a line)": (() => {
    const whole = rawJournal([claim("t1"), ["task_completed", { task_id: "t1" }]]);
    return whole.slice(0, whole.length - 40);
  })(),
  "a broken chain (the rows after it are folded all the same)": (() => {
    const lines = rawJournal([claim("x"), claim("y"), ["task_completed", { task_id: "x" }]])
      .split("\n");
    lines[1] = lines[1].replace('"task_id":"y"', '"task_id":"Y"');
    return lines.join("\n");
  })(),
  "thousands of cards across several parts, one card longer than a part": rawJournal([
    claim("long", { title: "\u00e9".repeat(300_000) }),
    ...Array.from({ length: 3000 }, (_, i) =>
      claim(`task-${i % 2000}`, {
        // Latin-1 and wider titles interleaved, of odd and even lengths.
        title: `Title ${i} ${i % 3 === 0 ? "\u00e9\u{1F600}" : "\u00e9"} ` + "x".repeat(i % 600),
        role: "r",
      })),
  ]),
};

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("the board's bytes are the replaced algorithm's on every hostile journal, and CPython's fold.py agrees", async () => {
  await using dir = await tempDir();
  const paths: string[] = [];
  const ours: string[] = [];
  for (const [i, [name, journal]] of Object.entries(CATALOGUE).entries()) {
    const both = bothWays(enc(journal));
    assert.equal(both.ours, both.reference, name);
    assert.equal(both.sha256, sha256Hex(both.reference), name);
    // The objects a review action answers are the same board.
    assert.equal(canonicalJsonExact(boardOf(both.state)), both.reference, name);
    const path = join(dir.path, `${i}.jsonl`);
    await Deno.writeTextFile(path, journal);
    paths.push(path);
    ours.push(both.sha256);
  }
  const script = "import json, sys; sys.path.insert(0, sys.argv[1]); from fold import fold; " +
    "print(json.dumps([fold(p)[1]['projection_hash'] for p in sys.argv[2:]]))";
  const fold = new URL("../../scripts/fold.py", import.meta.url).pathname;
  const out = await new Deno.Command("python3", { args: ["-c", script, dirname(fold), ...paths] })
    .output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const theirs: string[] = JSON.parse(new TextDecoder().decode(out.stdout));
  const names = Object.keys(CATALOGUE);
  assert.deepEqual(
    names.flatMap((n, i) => ours[i] === theirs[i] ? [] : [n]),
    [],
  );
});

Deno.test("the board's bytes are the replaced algorithm's and CPython's on random journals", async () => {
  await using dir = await tempDir();
  const paths: string[] = [];
  const ours: string[] = [];
  for (let seed = 0; seed < 40; seed++) {
    const journal = journalText(randomEvents(seed * 7919 + 1, 50 + seed * 10, 3 + seed));
    const both = bothWays(enc(journal));
    assert.equal(both.ours, both.reference, `seed ${seed}`);
    const path = join(dir.path, `${seed}.jsonl`);
    await Deno.writeTextFile(path, journal);
    paths.push(path);
    ours.push(both.sha256);
  }
  const script = "import json, sys; sys.path.insert(0, sys.argv[1]); from fold import fold; " +
    "print(json.dumps([fold(p)[1]['projection_hash'] for p in sys.argv[2:]]))";
  const fold = new URL("../../scripts/fold.py", import.meta.url).pathname;
  const out = await new Deno.Command("python3", { args: ["-c", script, dirname(fold), ...paths] })
    .output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), ours);
});

Deno.test("the board's bytes order ties on last_index by code point, as the replaced algorithm did", () => {
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const ids = ["a", "b", "\uffff", "\u{10000}", "\u00e9", "A", "a\ud800", "aa"];
  for (let round = 0; round < 200; round++) {
    const rows: Row[] = [];
    for (let i = 0; i < 30; i++) {
      const task_id = ids[Math.floor(rand() * ids.length)];
      const type = ["task_claimed", "task_completed", "task_merged", "task_retried"][
        Math.floor(rand() * 4)
      ];
      const data: Record<string, JsonValue> = { task_id };
      if (rand() < 0.3) data.title = `T${i}`;
      // Indices repeat and go back: only the order of cards with equal indices is left to ids.
      rows.push({ index: Math.floor(rand() * 6), row: { type, data } });
    }
    const ours = boardBytes(foldRows(rows));
    assert.equal(text(ours.parts), canonicalJsonExact(referenceBoard(rows)), `round ${round}`);
  }
});
