import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type ByteSource, bytesSource, IncrementalJournal, NO_SINK } from "./incremental.ts";
import { countingSink, journalText, sampleEvents } from "../../tests/helpers.ts";

const enc = (s: string) => new TextEncoder().encode(s);

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

/** A file in memory read the way journal_file.ts reads one: at positions, into small buffers. */
function memorySource(bytes: Uint8Array, maxRead = 7): ByteSource {
  return {
    size: bytes.length,
    readAt(position, into) {
      const n = Math.min(into.length, maxRead, bytes.length - position);
      into.set(bytes.subarray(position, position + n));
      return Math.max(0, n);
    },
  };
}

Deno.test("read() streams: the same verdict as update(), appends fold only the suffix, any edit is seen", async () => {
  const events = sampleEvents();
  let text = journalText(events);
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  assert.equal((await view.read(memorySource(enc(text)))).state.n, 5);
  for (let i = 0; i < 12; i++) { // more appends than spans are kept: spans get folded
    events.push({ type: "task_completed", data: { task_id: `x${i}` } });
    text = journalText(events);
    const snapshot = await view.read(memorySource(enc(text)));
    assert.equal(snapshot.walker.verified, true);
    assert.equal(
      snapshot.walker.lastHash,
      new IncrementalJournal(NO_SINK).update(enc(text)).walker.lastHash,
    );
  }
  assert.equal(sink.fed, 17); // each row folded once
  const torn = await view.read(memorySource(enc(text + '{"data":')));
  assert.equal(torn.walker.verified, false);
  assert.equal(torn.endsWithNewline, false);
  for (const [needle, swap] of [['"First"', '"Fir5t"'], ['"x3"', '"y3"'], ['"x11"', '"y11"']]) {
    const edited = text.replace(needle, swap);
    const fresh = new IncrementalJournal(NO_SINK);
    await fresh.read(memorySource(enc(text)));
    assert.equal((await fresh.read(memorySource(enc(edited)))).walker.verified, false, needle);
  }
});

Deno.test("read() takes a line longer than its buffer", async () => {
  const text = journalText([{
    type: "task_claimed",
    data: { task_id: "t", pad: "p".repeat(3 << 20) },
  }]);
  const snapshot = await new IncrementalJournal(NO_SINK).read(memorySource(enc(text), 1 << 20));
  assert.equal(snapshot.walker.verified, true);
  assert.equal(snapshot.walker.rowCount, 1);
});

Deno.test("read() calls on one view are serialised: concurrent reads fold each row once", async () => {
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  const events = sampleEvents();
  const texts = [journalText(events)];
  for (let i = 0; i < 5; i++) {
    events.push({ type: "task_completed", data: { task_id: `x${i}` } });
    texts.push(journalText(events));
  }
  const snapshots = await Promise.all(texts.map((t) => view.read(memorySource(enc(t)))));
  assert.ok(snapshots.every((s) => s.walker.verified));
  assert.equal(snapshots.at(-1)!.walker.rowCount, 10);
  assert.equal(sink.fed, 10);
});

Deno.test("a read that leaves its digest for later makes the next read start over until it is settled", () => {
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  assert.equal(view.update(enc(prefix)).walker.verified, true); // digest taken as read
  const grown = view.read(bytesSource(enc(full)), { digestLater: true }); // only the new row
  assert.equal(grown.state.n, 6);
  assert.equal(sink.fed, 6);
  const pending = view.pendingDigest()!;
  assert.deepEqual([pending.start, pending.end], [enc(prefix).length, enc(full).length]);
  // Nothing vouches for the new row yet: the next read verifies and folds everything again.
  const again = view.update(enc(full));
  assert.equal(again.state.n, 6);
  assert.equal(again.walker.verified, true);
  assert.equal(sink.fed, 12);
  assert.equal(view.pendingDigest(), undefined);
});

Deno.test("a digest settled from the verified bytes lets the next read fold only what was appended", () => {
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  view.read(bytesSource(enc(prefix)), { digestLater: true });
  const pending = view.pendingDigest()!;
  assert.deepEqual([pending.start, pending.end], [0, enc(prefix).length]);
  assert.equal(view.settleDigest(pending, sha256(enc(prefix))), true);
  assert.equal(view.settleDigest(pending, sha256(enc(prefix))), false); // once only
  assert.equal(view.update(enc(full)).state.n, 6);
  assert.equal(sink.fed, 6);
  // The settled digest is compared like any other: an edit of the prefix is still caught.
  const edited = full.replace('"First"', '"Fir5t"');
  const snapshot = view.update(enc(edited));
  assert.equal(snapshot.walker.verified, false);
  assert.equal(snapshot.walker.firstFault?.seq, 1);
});

Deno.test("a digest for a view that has moved on since is refused", () => {
  const view = new IncrementalJournal(NO_SINK);
  view.read(bytesSource(enc(prefix)), { digestLater: true });
  const stale = view.pendingDigest()!;
  view.read(bytesSource(enc(full)), { digestLater: true }); // started over, a new version
  assert.equal(view.settleDigest(stale, sha256(enc(prefix))), false);
  const current = view.pendingDigest()!;
  assert.equal(current.end, enc(full).length);
  assert.equal(view.settleDigest(current, sha256(enc(full))), true);
});

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
