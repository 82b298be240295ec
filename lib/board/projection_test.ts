import assert from "node:assert/strict";
import { IncrementalJournal } from "../journal/incremental.ts";
import { journalText, sampleEvents } from "../../tests/helpers.ts";
import { boardAsFolded, type Projection, receiptOf, servedReceipt } from "./projection.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";

const projected = (runId: string, text: string): Projection =>
  receiptOf(runId, new IncrementalJournal(BOARD_FOLD_SINK).update(new TextEncoder().encode(text)));

function bytesOf(parts: Uint8Array[]): string {
  return parts.map((part) => new TextDecoder().decode(part)).join("");
}

Deno.test("the receipt's ETag follows every byte served: the board, the head, the verdict, the run", () => {
  const text = journalText(sampleEvents("r1"));
  const base = servedReceipt(projected("r1", text));
  assert.match(base.etag, /^"[0-9a-f]{64}"$/);
  assert.equal(bytesOf(base.parts).length, base.length);
  assert.equal(servedReceipt(projected("r1", text)).etag, base.etag); // same bytes, same tag

  const projection = projected("r1", text);
  const others = {
    board: servedReceipt(projected("r1", text.replace('"First"', '"Fir5t"'))),
    head: servedReceipt(
      projected("r1", journalText([...sampleEvents("r1"), { type: "x_unknown", data: {} }])),
    ),
    verdict: servedReceipt({
      ...projection,
      receipt: { ...projection.receipt, journal_verified: false },
    }),
    run: servedReceipt(projected("r2", text)),
  };
  for (const [what, other] of Object.entries(others)) {
    assert.notEqual(bytesOf(other.parts), bytesOf(base.parts), what);
    assert.notEqual(other.etag, base.etag, `${what}: other bytes, same tag`);
  }
  assert.notEqual(others.board.etag, others.head.etag);
});

Deno.test("a receipt's board as objects is given only while its state holds no later row", () => {
  const events = sampleEvents("r1");
  const view = new IncrementalJournal(BOARD_FOLD_SINK);
  const enc = (text: string) => new TextEncoder().encode(text);
  const first = receiptOf("r1", view.update(enc(journalText(events))));
  const served = JSON.parse(bytesOf(servedReceipt(first).parts));
  assert.deepEqual(boardAsFolded(first), served);
  // The same view reads the grown journal: its state moves on, the first receipt's board is gone.
  const grown = journalText([...events, { type: "task_merged", data: { task_id: "t1" } }]);
  const second = receiptOf("r1", view.update(enc(grown)));
  assert.equal(boardAsFolded(first), undefined);
  assert.equal(boardAsFolded(second)?.board.columns.merged[0]?.task_id, "t1");
});
