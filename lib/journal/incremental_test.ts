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

Deno.test("IncrementalJournal keeps digests, not bytes: the memory it was fed may be reused", () => {
  const view = new IncrementalJournal(NO_SINK);
  const buffer = enc(full);
  assert.equal(view.update(buffer).walker.verified, true);
  buffer.fill(0x20); // the caller reuses its buffer for something else
  const again = view.update(enc(full));
  assert.equal(again.walker.verified, true);
  assert.equal(again.walker.rowCount, 6);
});

Deno.test("IncrementalJournal catches an edit inside any span after many appends", () => {
  const grownView = () => {
    const events = sampleEvents();
    let text = journalText(events);
    const view = new IncrementalJournal(NO_SINK);
    view.update(enc(text));
    for (let i = 0; i < 12; i++) { // more appends than spans are kept: spans get folded
      events.push({ type: "task_completed", data: { task_id: `x${i}` } });
      text = journalText(events);
      assert.equal(view.update(enc(text)).walker.verified, true);
    }
    return { view, text };
  };
  for (const [needle, swap] of [['"First"', '"Fir5t"'], ['"x3"', '"y3"'], ['"x11"', '"y11"']]) {
    const { view, text } = grownView();
    const edited = text.replace(needle, swap);
    assert.equal(edited.length, text.length);
    assert.equal(view.update(enc(edited)).walker.verified, false, needle);
  }
});
