import assert from "node:assert/strict";
import { IncrementalJournal, NO_SINK, type RowSink } from "./incremental.ts";
import { journalText, sampleEvents } from "../../tests/helpers.ts";

const enc = (s: string) => new TextEncoder().encode(s);

// Counts rows it was fed, to prove which work a refresh did.
function countingSink(): RowSink<{ n: number }> & { fed: number } {
  const sink = {
    fed: 0,
    init: () => ({ n: 0 }),
    apply: (s: { n: number }) => {
      s.n++;
      sink.fed++;
    },
    clone: (s: { n: number }) => ({ ...s }),
  };
  return sink;
}

const full = journalText([...sampleEvents(), { type: "task_completed", data: { task_id: "t2" } }]);
const prefix = journalText(sampleEvents());

Deno.test("IncrementalJournal only folds the suffix when the journal grew", () => {
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  assert.equal(view.update(enc(prefix)).state.n, 5);
  const grown = view.update(enc(full));
  assert.equal(grown.state.n, 6);
  assert.equal(sink.fed, 6);
  assert.equal(grown.walker.verified, true);
});

Deno.test("IncrementalJournal starts over when a verified prefix is edited in place (same length)", () => {
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  assert.equal(view.update(enc(full)).walker.verified, true);
  const edited = full.replace('"First"', '"Fir5t"');
  assert.equal(edited.length, full.length);
  const snapshot = view.update(enc(edited));
  assert.equal(snapshot.walker.verified, false);
  assert.equal(snapshot.walker.firstFault?.seq, 1);
  assert.equal(sink.fed, 12);
});

Deno.test("IncrementalJournal starts over when the journal shrank", () => {
  const view = new IncrementalJournal(NO_SINK);
  view.update(enc(full));
  const snapshot = view.update(enc(prefix));
  assert.equal(snapshot.walker.rowCount, 5);
  assert.equal(snapshot.walker.verified, true);
});

Deno.test("IncrementalJournal never commits a tail without a newline", () => {
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  const torn = prefix + full.slice(prefix.length, prefix.length + 20);
  const first = view.update(enc(torn));
  assert.equal(first.walker.verified, false);
  assert.equal(first.walker.firstFault?.kind, "torn_tail");
  const healed = view.update(enc(full));
  assert.equal(healed.walker.verified, true);
  assert.equal(healed.state.n, 6);
});
