import assert from "node:assert/strict";
import { verifyJournalText } from "./verify.ts";
import { canonicalJson } from "./canonical_json.ts";
import { sha256Hex } from "./hash.ts";
import { journalLines, journalText, sampleEvents } from "../../tests/helpers.ts";

const good = journalLines(sampleEvents());

function rehashed(line: string, edit: (row: Record<string, unknown>) => void): string {
  const row = JSON.parse(line);
  edit(row);
  delete row.hash;
  row.hash = sha256Hex(canonicalJson(row));
  return canonicalJson(row);
}

// The catalogue of broken journals: each must fail verification at the named row and kind.
const BROKEN: { name: string; text: string; seq: number; kind: string }[] = [
  {
    name: "a flipped character inside data",
    text: [good[0], good[1].replace('"First"', '"Firsu"'), ...good.slice(2)].join("\n") + "\n",
    seq: 1,
    kind: "hash",
  },
  {
    name: "an edited row re-hashed (next row's prev no longer matches)",
    text: [
      good[0],
      rehashed(good[1], (r) => ((r.data as Record<string, unknown>).title = "Forged")),
      ...good.slice(2),
    ]
      .join("\n") + "\n",
    seq: 2,
    kind: "prev",
  },
  {
    name: "two swapped rows",
    text: [good[0], good[2], good[1], ...good.slice(3)].join("\n") + "\n",
    seq: 1,
    kind: "seq",
  },
  {
    name: "a deleted middle row",
    text: [good[0], ...good.slice(2)].join("\n") + "\n",
    seq: 1,
    kind: "seq",
  },
  {
    name: "truncated then extended by an independent chain",
    text: [...good.slice(0, 2), ...journalLines(sampleEvents("other")).slice(2)].join("\n") + "\n",
    seq: 2,
    kind: "prev",
  },
  {
    name: "a torn tail",
    text: good.join("\n") + "\n" + good[0].slice(0, 40),
    seq: 5,
    kind: "torn_tail",
  },
  {
    name: "a blank line",
    text: [good[0], "", ...good.slice(1)].join("\n") + "\n",
    seq: 1,
    kind: "unparseable",
  },
  {
    name: "a line that is not an object",
    text: [good[0], "[1,2]"].join("\n") + "\n",
    seq: 1,
    kind: "shape",
  },
  {
    name: "a wrong prev on the first row",
    text: [rehashed(good[0], (r) => (r.prev = "1".repeat(64))), ...good.slice(1)].join("\n") + "\n",
    seq: 0,
    kind: "prev",
  },
  {
    name: "a hash over non-canonical bytes (whitespace added, hash recomputed over them)",
    text: (() => {
      const row = JSON.parse(good[0]);
      delete row.hash;
      const spaced = JSON.stringify(row, null, 1).replaceAll("\n", "");
      const hash = sha256Hex(spaced);
      return [spaced.slice(0, -1) + `, "hash": "${hash}"}`, ...good.slice(1)].join("\n") + "\n";
    })(),
    seq: 0,
    kind: "hash",
  },
  {
    name: "a float smuggled into data",
    text: [good[0].replace('"plan":"sample"', '"plan":1.5'), ...good.slice(1)].join("\n") + "\n",
    seq: 0,
    kind: "hash",
  },
  {
    name: "upper-case hex in hash",
    text: [
      good[0].replace(
        /"hash":"([0-9a-f]{64})"/,
        (_m, h: string) => `"hash":"${h.toUpperCase()}"`,
      ),
      ...good.slice(1),
    ]
      .join("\n") + "\n",
    seq: 0,
    kind: "shape",
  },
];

for (const { name, text, seq, kind } of BROKEN) {
  Deno.test(`verifyJournalText() rejects ${name}`, () => {
    const report = verifyJournalText(text);
    assert.equal(report.verified, false);
    assert.equal(report.firstFault?.seq, seq, report.firstFault?.message ?? "");
    assert.equal(report.firstFault?.kind, kind, report.firstFault?.message);
    assert.match(report.firstFault!.message, /expected .* found /);
  });
}

Deno.test("verifyJournalText() accepts a journal written by the encoder and reports its head", () => {
  const report = verifyJournalText(journalText(sampleEvents()));
  assert.equal(report.verified, true);
  assert.equal(report.rowCount, 5);
  assert.equal(report.head, JSON.parse(good[4]).hash);
});

Deno.test("verifyJournalText() accepts an empty journal with the zero head", () => {
  const report = verifyJournalText("");
  assert.deepEqual([report.verified, report.rowCount, report.head], [true, 0, "0".repeat(64)]);
});

Deno.test("verifyJournalText() accepts a non-canonical line whose hash is over the canonical form, as Python does", () => {
  const row = JSON.parse(good[0]);
  const spaced = JSON.stringify(row, null, 1).replaceAll("\n", "");
  const report = verifyJournalText([spaced, ...good.slice(1)].join("\n") + "\n");
  assert.equal(report.verified, true, report.firstFault?.message ?? "");
});

Deno.test("verifyJournalText() accepts a whole last row without a newline", () => {
  assert.equal(verifyJournalText(good.join("\n")).verified, true);
});

Deno.test("verifyJournalText() still returns the rows after the first fault (the board renders tampered runs)", () => {
  const text = [good[0], good[2], good[1], ...good.slice(3)].join("\n") + "\n";
  assert.equal(verifyJournalText(text).rows.length, 5);
});
