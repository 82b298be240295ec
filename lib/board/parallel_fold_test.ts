import assert from "node:assert/strict";
import { forEachLine, IncrementalJournal, walkSegment } from "../journal/incremental.ts";
import { linkWalkers } from "../journal/verify.ts";
import { canonicalJson } from "../journal/canonical_json.ts";
import { boardOf, mergeFoldStates } from "./fold.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";
import { BOARD_SINK, projectJournal } from "./projection.ts";
import { journalLines, randomEvents, tempDir } from "../../tests/helpers.ts";
import { join } from "node:path";

// One sequential walk versus "lines before k here, lines from k detached, then linked and merged".
function bothWays(text: string) {
  const bytes = new TextEncoder().encode(text);
  const sequential = new IncrementalJournal(BOARD_FOLD_SINK).update(bytes);
  const expected = JSON.stringify([
    canonicalJson(boardOf(sequential.state)),
    sequential.walker.toState(),
  ]);
  const splits: number[] = [];
  for (
    let at = bytes.indexOf(10);
    at !== -1 && at + 1 < bytes.length;
    at = bytes.indexOf(10, at + 1)
  ) splits.push(at + 1);
  for (const split of splits) {
    const left = walkSegment(BOARD_FOLD_SINK, bytes.subarray(0, split), 0);
    // A walker from line 0 is not detached: rebuild it the way the view does.
    const view = new IncrementalJournal(BOARD_FOLD_SINK).update(bytes.subarray(0, split));
    const startLine = view.walker.lineIndex;
    const right = walkSegment(BOARD_FOLD_SINK, bytes.subarray(split), startLine);
    const walker = linkWalkers(view.walker, right.walker.toState());
    const state = mergeFoldStates(structuredClone(view.state), structuredClone(right.state));
    assert.equal(left.walker.lineIndex, startLine);
    assert.equal(
      JSON.stringify([canonicalJson(boardOf(state)), walker.toState()]),
      expected,
      `split at byte ${split} (line ${startLine})`,
    );
  }
}

Deno.test("a journal folded in two segments, linked and merged, equals one sequential fold at every split", () => {
  for (const seed of [1, 2, 3, 4]) {
    bothWays(journalLines(randomEvents(seed, 40, 6)).join("\n") + "\n");
  }
});

Deno.test("split folding finds the same first fault in tampered journals", () => {
  const lines = journalLines(randomEvents(9, 30, 6));
  const variants = [
    [...lines.slice(0, 10), ...lines.slice(11)], // deleted row
    [...lines.slice(0, 10), lines[11], lines[10], ...lines.slice(12)], // swapped rows
    lines.map((l, i) => (i === 20 ? l.replace('"data":{', '"data":{"x":1,') : l)), // edited row
    lines.map((l, i) => (i === 15 ? "{broken" : l)), // unparseable row
    lines.map((
      l,
      i,
    ) => (i === 5 ? l.replace(/"prev":"[0-9a-f]{64}"/, `"prev":"${"Z".repeat(64)}"`) : l)), // bad prev syntax
  ];
  for (const v of variants) bothWays(v.join("\n") + "\n");
});

Deno.test("forEachLine() hands each line with its exact bytes", () => {
  const bytes = new TextEncoder().encode("a\nbé\n\nc\n");
  const seen: [string, number][] = [];
  forEachLine(bytes, 0, bytes.length, (line, b) => seen.push([line, b.length]));
  assert.deepEqual(seen, [["a", 1], ["bé", 3], ["", 0], ["c", 1]]);
});

Deno.test("a large first projection (worker path) equals the sequential one", async () => {
  await using dir = await tempDir();
  const lines = journalLines(
    randomEvents(5, 400).map((e, i) => ({ ...e, data: { ...e.data, pad: "x".repeat(i % 50) } })),
  );
  const text = lines.join("\n") + "\n";
  const minBytes = BOARD_SINK.parallel!.minBytes;
  BOARD_SINK.parallel!.minBytes = 1024; // force the worker on a small file
  try {
    const path = join(dir.path, "journal.jsonl");
    await Deno.writeTextFile(path, text);
    const parallel = await projectJournal("p", path);
    const sequential = new IncrementalJournal(BOARD_FOLD_SINK).update(
      new TextEncoder().encode(text),
    );
    assert.equal(canonicalJson(parallel.receipt.board), canonicalJson(boardOf(sequential.state)));
    assert.equal(parallel.receipt.journal_head, sequential.walker.lastHash);
    assert.equal(parallel.receipt.journal_verified, true);
  } finally {
    BOARD_SINK.parallel!.minBytes = minBytes;
  }
});
