/**
 * The bulk path (WebAssembly) must agree with the JavaScript verifier on every line: it may only
 * prove lines that verify, and whatever it leaves to the slow path must come out exactly as if
 * the slow path had walked the whole journal. A catalogue of canonical, non-canonical, broken
 * and hostile lines, each placed between good rows, is walked both ways and compared: verified,
 * head, row count, first fault, and the board folded from it.
 */
import assert from "node:assert/strict";
import { canonicalJson } from "./canonical_json.ts";
import { sha256Hex, ZERO_HASH } from "./hash.ts";
import { IncrementalJournal, NO_SINK } from "./incremental.ts";
import { verifyJournalText } from "./verify.ts";
import { encodeRow, type JournalEvent } from "./row.ts";
import { proveLines } from "./bulk_verify.ts";
import { BOARD_FOLD_SINK } from "../board/sink.ts";
import { boardOf, foldBoard } from "../board/fold.ts";

const enc = (s: string) => new TextEncoder().encode(s);

/** A row whose hash is SHA-256 of exactly these bytes minus the hash member (a naive writer). */
function rawLine(prev: string, seq: number, dataText: string, type = "task_claimed", v = "1") {
  const unsigned =
    `{"data":${dataText},"prev":"${prev}","seq":${seq},"ts":"t","type":"${type}","v":${v}}`;
  const hash = sha256Hex(unsigned);
  const line = unsigned.replace(`,"prev":`, `,"hash":"${hash}","prev":`);
  return { line, hash };
}

/** A row with non-canonical bytes whose hash is over the canonical form (it verifies). */
function canonicallyHashed(prev: string, seq: number, dataText: string, type = "task_claimed") {
  const unsigned = { data: JSON.parse(dataText), prev, seq, ts: "t", type, v: 1 };
  const hash = sha256Hex(canonicalJson(unsigned));
  return {
    line:
      `{"data":${dataText},"hash":"${hash}","prev":"${prev}","seq":${seq},"ts":"t","type":"${type}","v":1}`,
    hash,
  };
}

type Make = (prev: string, seq: number) => { line: string; hash: string };
const claim = (data: string): Make => (prev, seq) => rawLine(prev, seq, data);
const canon = (data: string): Make => (prev, seq) => canonicallyHashed(prev, seq, data);

// Each case is one line between good rows. Both paths must give the same outcome.
const CASES: { name: string; make: Make }[] = [
  { name: "canonical", make: claim('{"task_id":"a","title":"x"}') },
  { name: "empty data", make: claim("{}") },
  {
    name: "every canonical escape",
    make: claim(
      String
        .raw`{"task_id":"a","title":"\" \\ \b \f \n \r \t \u0000 \u001f \u007f \u00e9 \ud83d\ude00 \ud800 \uffff"}`,
    ),
  },
  {
    name: "\\u for a printable character, canonically hashed",
    make: canon(String.raw`{"task_id":"a","title":"\u0041"}`),
  },
  {
    name: "\\u for a printable character, hashed as written",
    make: claim(String.raw`{"task_id":"a","title":"\u0041"}`),
  },
  { name: "\\u000a instead of \\n", make: canon(String.raw`{"task_id":"a","title":"\u000a"}`) },
  { name: "upper-case \\u hex", make: canon(String.raw`{"task_id":"a","title":"\u00E9"}`) },
  { name: "escaped solidus", make: canon(String.raw`{"task_id":"a","title":"\/"}`) },
  { name: "raw DEL", make: canon('{"task_id":"a","title":"\x7f"}') },
  { name: "raw non-ASCII", make: canon('{"task_id":"a","title":"é"}') },
  { name: "raw non-ASCII hashed as written", make: claim('{"task_id":"a","title":"é"}') },
  { name: "raw tab in a string", make: claim('{"task_id":"a","title":"\t"}') },
  { name: "white space", make: canon('{ "task_id": "a" }') },
  { name: "unsorted keys, canonically hashed", make: canon('{"title":"x","task_id":"a"}') },
  { name: "unsorted keys, hashed as written", make: claim('{"title":"x","task_id":"a"}') },
  { name: "duplicate keys", make: canon('{"task_id":"a","task_id":"b"}') },
  { name: "duplicate keys hashed as written", make: claim('{"task_id":"a","task_id":"b"}') },
  { name: "key with an escape", make: claim(String.raw`{"a\"b":1,"task_id":"a"}`) },
  { name: "empty key and __proto__", make: claim('{"":1,"__proto__":{"x":1},"task_id":"a"}') },
  { name: "upper case sorts before lower case", make: claim('{"Z":1,"a":2,"task_id":"a"}') },
  { name: "numeric keys", make: claim('{"1":1,"10":2,"9":3,"task_id":"a"}') },
  { name: "integers", make: claim('{"a":[0,-1,999999999999999,-999999999999999],"task_id":"a"}') },
  { name: "-0", make: canon('{"a":-0,"task_id":"a"}') },
  { name: "leading zero", make: claim('{"a":01,"task_id":"a"}') },
  { name: "a fraction", make: claim('{"a":1.5,"task_id":"a"}') },
  { name: "1.0", make: canon('{"a":1.0,"task_id":"a"}') },
  { name: "an exponent", make: canon('{"a":1e3,"task_id":"a"}') },
  { name: "sixteen digits", make: claim('{"a":1000000000000000,"task_id":"a"}') },
  { name: "an unsafe integer", make: claim('{"a":9007199254740993,"task_id":"a"}') },
  { name: "literals", make: claim('{"a":[true,false,null,[],{}],"task_id":"a"}') },
  { name: "a bad literal", make: claim('{"a":tru,"task_id":"a"}') },
  {
    name: "nesting 60 deep",
    make: claim(`{"a":${"[".repeat(60)}${"]".repeat(60)},"task_id":"a"}`),
  },
  {
    name: "nesting 70 deep",
    make: claim(`{"a":${"[".repeat(70)}${"]".repeat(70)},"task_id":"a"}`),
  },
  { name: "task_id not a string", make: claim('{"task_id":7,"title":"x"}') },
  { name: "task_id with an escape", make: claim(String.raw`{"task_id":"t\u00e9"}`) },
  { name: "task_id only nested", make: claim('{"inner":{"task_id":"deep"}}') },
  { name: "a key that ends in task_id", make: claim('{"my_task_id":"x","task_id":"a"}') },
  { name: "a long line (2 MB)", make: claim(`{"pad":"${"x".repeat(2 << 20)}","task_id":"a"}`) },
  {
    name: "type with an escape",
    make: (prev, seq) => rawLine(prev, seq, '{"task_id":"a"}', String.raw`task_\u00e9`),
  },
  {
    name: "v as a string",
    make: (prev, seq) => rawLine(prev, seq, '{"task_id":"a"}', "task_claimed", '"1"'),
  },
  {
    name: "v negative",
    make: (prev, seq) => rawLine(prev, seq, '{"task_id":"a"}', "task_claimed", "-1"),
  },
  {
    name: "data is an array",
    make: (prev, seq) => {
      const line = `{"data":[],"hash":"${
        "a".repeat(64)
      }","prev":"${prev}","seq":${seq},"ts":"t","type":"x","v":1}`;
      return { line, hash: "a".repeat(64) };
    },
  },
  {
    name: "an extra top-level key",
    make: (prev, seq) => {
      const row = {
        data: { task_id: "a" },
        extra: 1,
        prev,
        seq,
        ts: "t",
        type: "task_claimed",
        v: 1,
      };
      const hash = sha256Hex(canonicalJson(row));
      return { line: canonicalJson({ ...row, hash }), hash };
    },
  },
  {
    name: "upper-case hash",
    make: (prev, seq) => {
      const { line, hash } = rawLine(prev, seq, '{"task_id":"a"}');
      return { line: line.replace(hash, hash.toUpperCase()), hash };
    },
  },
  {
    name: "a tampered byte",
    make: (prev, seq) => {
      const { line, hash } = rawLine(prev, seq, '{"task_id":"a","title":"honest"}');
      return { line: line.replace("honest", "forged"), hash };
    },
  },
  { name: "wrong prev", make: (_prev, seq) => rawLine("1".repeat(64), seq, '{"task_id":"a"}') },
  { name: "wrong seq", make: (prev, seq) => rawLine(prev, seq + 1, '{"task_id":"a"}') },
  {
    name: "trailing CR",
    make: (prev, seq) => {
      const { line, hash } = canonicallyHashed(prev, seq, '{"task_id":"a"}');
      return { line: line + "\r", hash };
    },
  },
  { name: "an empty line", make: () => ({ line: "", hash: ZERO_HASH }) },
  { name: "not JSON", make: () => ({ line: "{not json", hash: ZERO_HASH }) },
];

const FOLLOWING: JournalEvent[] = [
  {
    type: "task_diff_captured",
    data: { added: 1, files: 1, removed: 2, sha256: "sha256:ab", task_id: "a" },
  },
  { type: "task_verification_failed", data: { signals: [{ kind: "tests" }], task_id: "a" } },
  { type: "task_completed", data: { task_id: "a", detail: "y" } },
  {
    type: "task_review_decision",
    data: { decision: "merge", principal: "p", task_id: "a", note: "n" },
  },
  { type: "task_merged", data: { task_id: String.raw`t\u00e9`.length > 0 ? "b" : "a" } },
  { type: "run_completed", data: { status: "completed" } },
];

function journalAround(make: Make): string {
  const lines: string[] = [];
  let prev = ZERO_HASH;
  const push = (event: JournalEvent) => {
    const row = encodeRow(event, { prev, seq: lines.length, ts: "t" });
    lines.push(row.line);
    prev = row.hash;
  };
  push({ type: "run_started", data: { run_id: "r" } });
  push({ type: "task_claimed", data: { role: "r", task_id: "b", title: "B" } });
  const made = make(prev, lines.length);
  lines.push(made.line);
  prev = made.hash;
  for (const event of FOLLOWING) push(event);
  return lines.join("\n") + "\n";
}

function bothWays(text: string) {
  const bulk = new IncrementalJournal(BOARD_FOLD_SINK).update(enc(text));
  const slow = verifyJournalText(text);
  return {
    bulk: {
      verified: bulk.walker.verified,
      head: bulk.walker.lastHash,
      rows: bulk.walker.rowCount,
      fault: bulk.walker.firstFault,
      board: canonicalJson(boardOf(bulk.state)),
    },
    slow: {
      verified: slow.verified,
      head: slow.head,
      rows: slow.rowCount,
      fault: slow.firstFault,
      board: canonicalJson(foldBoard(slow.rows)),
    },
  };
}

for (const { name, make } of CASES) {
  Deno.test(`bulk and slow verification agree: ${name}`, () => {
    const { bulk, slow } = bothWays(journalAround(make));
    assert.deepEqual(bulk, slow);
  });
}

Deno.test("the catalogue exercises both outcomes: some cases verify, some do not", () => {
  const outcomes = CASES.map(({ make }) => verifyJournalText(journalAround(make)).verified);
  assert.ok(outcomes.filter(Boolean).length >= 10);
  assert.ok(outcomes.filter((v) => !v).length >= 10);
});

// Which lines the bulk path proves on its own (the rest is the slow path's, even if they verify).
Deno.test("the bulk path proves canonical lines and stops at the first it cannot prove", () => {
  const proves = (make: Make) => {
    const text = journalAround(make);
    const cursor = { nextSeq: 0, head: ZERO_HASH };
    const bytes = enc(text);
    const at = proveLines(bytes, cursor, {
      from: 0,
      end: bytes.length,
      reads: () => "data",
      apply: () => {},
    });
    return { at, all: at === bytes.length, seq: cursor.nextSeq };
  };
  assert.equal(proves(claim('{"task_id":"a"}')).all, true);
  assert.equal(proves(claim('{"task_id":"a"}')).seq, 2 + 1 + FOLLOWING.length);
  for (
    const data of [
      '{"title":"x","task_id":"a"}',
      String.raw`{"t":"\u0041"}`,
      '{"a":1.5}',
      '{ "a":1}',
    ]
  ) {
    const { all, seq } = proves(claim(data));
    assert.equal(all, false, data);
    assert.equal(seq, 2, data); // the two good rows before it, not one more
  }
  const tampered = proves(CASES.find((c) => c.name === "a tampered byte")!.make);
  assert.equal(tampered.seq, 2);
});

Deno.test("a journal of lines the bulk path cannot prove still verifies, the slow way", () => {
  const lines: string[] = [];
  let prev = ZERO_HASH;
  for (let seq = 0; seq < 3000; seq++) {
    const made = canonicallyHashed(prev, seq, `{"task_id":"t${seq}","title":"\\u0041"}`);
    lines.push(made.line);
    prev = made.hash;
  }
  const snapshot = new IncrementalJournal(NO_SINK).update(enc(lines.join("\n") + "\n"));
  assert.equal(snapshot.walker.verified, true);
  assert.equal(snapshot.walker.rowCount, 3000);
  assert.equal(snapshot.walker.lastHash, prev);
});

Deno.test("proven rows are folded with only what the fold reads, into the same board", () => {
  // Every kind of row the board folds, many tasks, long and escaped values.
  const events: JournalEvent[] = [{ type: "run_started", data: { run_id: "r", tasks: 300 } }];
  for (let i = 0; i < 300; i++) {
    const task_id = `task-${i}` + (i % 7 === 0 ? "\u00e9\n" : "");
    events.push(
      {
        type: "task_claimed",
        data: { role: "r", task_id, title: `T ${i} "q"`, detail: "x".repeat(i) },
      },
      { type: "agent_heartbeat", data: { task_id } },
      {
        type: "task_diff_captured",
        data: { added: i, files: 1, removed: 0, sha256: `sha256:${i}`, task_id },
      },
    );
    if (i % 3 === 0) {
      events.push({
        type: "task_verification_failed",
        data: { signals: [{ kind: "k", n: i }], task_id },
      });
    }
    if (i % 3 === 1) events.push({ type: "task_retried", data: { task_id } });
    events.push({ type: "task_completed", data: { task_id, extra: { task_id: "not this" } } });
    if (i % 5 === 0) {
      events.push({
        type: "task_review_decision",
        data: { decision: "approve", principal: "p", task_id },
      });
    }
    if (i % 2 === 0) events.push({ type: "task_merged", data: { commit: "c", task_id } });
  }
  events.push({ type: "run_completed", data: { status: "completed" } });
  let prev = ZERO_HASH;
  const lines = events.map((event, seq) => {
    const row = encodeRow(event, { prev, seq, ts: "t" });
    prev = row.hash;
    return row.line;
  });
  const { bulk, slow } = bothWays(lines.join("\n") + "\n");
  assert.equal(bulk.verified, true);
  assert.deepEqual(bulk, slow);
});

Deno.test("every reader gets exactly what it reads, across windows and row types seen for the first time", () => {
  const readers: ((type: string) => "data" | "task_id" | "nothing")[] = [
    () => "task_id",
    () => "data",
    () => "nothing",
    (type) => type.includes("custom") ? "data" : type === "task_merged" ? "task_id" : "nothing",
  ];
  readers.forEach((reads, r) => {
    // Types no earlier scan has seen, so their first rows come without an id.
    const events: JournalEvent[] = [];
    for (let i = 0; i < 3000; i++) {
      const kind =
        [`claimed_${r}`, "agent_heartbeat", `custom_${r}_${i % 7}`, "task_merged"][i % 4];
      const task_id = i % 9 === 0 ? 7 : `t${i % 50}`; // some task_ids are not strings
      events.push({ type: kind, data: { n: i, task_id, nested: { task_id: "no" } } });
    }
    let prev = ZERO_HASH;
    const lines = events.map((event, seq) => {
      const row = encodeRow(event, { prev, seq, ts: "t" });
      prev = row.hash;
      return row.line;
    });
    const bytes = enc(lines.join("\n") + "\n");
    assert.ok(bytes.length > 3 * 65536, "spans several scanner windows");
    const seen: { type: string; data: unknown; index: number }[] = [];
    const cursor = { nextSeq: 0, head: ZERO_HASH };
    const at = proveLines(bytes, cursor, {
      from: 0,
      end: bytes.length,
      reads,
      apply: (row, index) => {
        seen.push({ ...row, index });
      },
    });
    assert.equal(at, bytes.length);
    assert.equal(cursor.head, prev);
    assert.equal(seen.length, lines.length);
    seen.forEach(({ type, data, index }, i) => {
      const row = JSON.parse(lines[i]);
      assert.equal(index, i);
      assert.equal(type, row.type);
      const need = reads(type);
      const want = need === "data"
        ? row.data
        : need === "task_id" && typeof row.data.task_id === "string"
        ? { task_id: row.data.task_id }
        : {};
      assert.deepEqual(data, want, `reader ${r}, row ${i} (${type}, ${need})`);
    });
  });
});

/** A change to row k alone. */
function edit(change: (line: string) => string): (lines: string[], k: number) => string[] {
  return (lines, k) => lines.with(k, change(lines[k]));
}

// The hasher runs four rows at once, each lane at its own block: rows of every length across
// several 64-byte blocks make lanes finish out of step and put the padding, the length and the
// cut-out hash member at every offset of a block.
Deno.test("the bulk path proves rows of every length over several SHA-256 blocks, and stops at exactly the row a hostile change was made to", () => {
  const journal = (titles: string[]) => {
    let prev = ZERO_HASH;
    const lines = titles.map((title, seq) => {
      const row = encodeRow({ type: "task_claimed", data: { task_id: "a", title } }, {
        prev,
        seq,
        ts: "t",
      });
      prev = row.hash;
      return row.line;
    });
    return { lines, head: prev };
  };
  const prove = (lines: string[]) => {
    const bytes = enc(lines.join("\n") + "\n");
    const cursor = { nextSeq: 0, head: ZERO_HASH };
    const at = proveLines(bytes, cursor, {
      from: 0,
      end: bytes.length,
      reads: () => "nothing",
      apply: () => {},
    });
    return { all: at === bytes.length, seq: cursor.nextSeq, head: cursor.head };
  };
  const titles = Array.from({ length: 230 }, (_, n) => "x".repeat(n));
  const { lines, head } = journal(titles);
  assert.deepEqual(prove(lines), { all: true, seq: lines.length, head });
  // Each hostile change is made to row k of the journal; the proof must stop exactly there.
  const CHANGES: { name: string; change: (lines: string[], k: number) => string[] }[] = [
    {
      name: "a byte of data (before the hash member)",
      change: edit((l) => l.replace('"a"', '"b"')),
    },
    { name: "a byte of ts (after the hash member)", change: edit((l) => l.replace('"t"', '"u"')) },
    {
      name: "the last byte of the title",
      change: edit((l) => l.replace(/x?"},"hash"/, 'y"},"hash"')),
    },
    {
      name: "a non-canonical rewrite (a space after a colon)",
      change: edit((l) => l.replace('"task_id":"a"', '"task_id": "a"')),
    },
    {
      name: "the row out of chain order (swapped with the next)",
      change: (lines, k) => lines.with(k, lines[k + 1]).with(k + 1, lines[k]),
    },
  ];
  for (const { name, change } of CHANGES) {
    for (let k = 0; k < lines.length - 1; k += 3) {
      const changed = change(lines, k);
      assert.notEqual(changed[k], lines[k], `${name}, row ${k}`);
      const { all, seq } = prove(changed);
      assert.equal(all, false, `${name}, row ${k}`);
      assert.equal(seq, k, `${name}, row ${k}: the rows before it are proven, not it`);
    }
  }
});
