import assert from "node:assert/strict";
import { join } from "node:path";
import { IncrementalJournal } from "./incremental.ts";
import { readJournal } from "./journal_file.ts";
import { fileIdentity, SETTLED_MS, settledBefore } from "./file_identity.ts";
import { takeDigestLater } from "./later_digest.ts";
import { countingSink, journalText, sampleEvents, tempDir } from "../../tests/helpers.ts";

const prefix = journalText(sampleEvents());
const full = journalText([...sampleEvents(), { type: "task_completed", data: { task_id: "t2" } }]);

/**
 * A journal file read once with its digest left for later, and its identity then — settled
 * first when `settle` (as the board's reads require: a write within the same millisecond as the
 * one before could otherwise leave the identity as it was).
 */
async function readOnce(dir: string, settle = false) {
  const path = join(dir, "journal.jsonl");
  await Deno.writeTextFile(path, prefix);
  if (settle) await new Promise((r) => setTimeout(r, SETTLED_MS + 100));
  const sink = countingSink();
  const view = new IncrementalJournal(sink);
  const identity = (await fileIdentity(path))!;
  if (settle) assert.ok(settledBefore(identity, Date.now()));
  const snapshot = await readJournal(path, view, { digestLater: true });
  assert.equal(snapshot.walker.verified, true);
  assert.ok(view.pendingDigest());
  return { path, sink, view, identity };
}

Deno.test("a digest taken later from the unchanged file lets the next read fold only the appended rows", async () => {
  await using dir = await tempDir();
  const { path, sink, view, identity } = await readOnce(dir.path);
  assert.equal(await takeDigestLater(path, view, identity), true);
  assert.equal(view.pendingDigest(), undefined);
  await Deno.writeTextFile(path, full.slice(prefix.length), { append: true });
  const grown = await readJournal(path, view);
  assert.equal(grown.walker.verified, true);
  assert.equal(grown.state.n, 6);
  assert.equal(sink.fed, 6); // five rows once, then only the appended one
});

Deno.test("a file written after the read gets no digest, and the next read starts over and sees the edit", async () => {
  await using dir = await tempDir();
  const { path, sink, view, identity } = await readOnce(dir.path, true);
  const edited = prefix.replace('"First"', '"Fir5t"');
  assert.equal(edited.length, prefix.length);
  await Deno.writeTextFile(path, edited); // same size: only the ctime (and mtime) tell
  assert.equal(await takeDigestLater(path, view, identity), false);
  assert.ok(view.pendingDigest());
  const after = await readJournal(path, view);
  assert.equal(after.walker.verified, false);
  assert.equal(after.walker.firstFault?.seq, 1);
  assert.equal(sink.fed, 10); // every row again
});

Deno.test("a file replaced by another with the same bytes gets no digest (another inode)", async () => {
  await using dir = await tempDir();
  const { path, view, identity } = await readOnce(dir.path);
  await Deno.writeTextFile(`${path}.new`, prefix);
  await Deno.rename(`${path}.new`, path);
  assert.equal(await takeDigestLater(path, view, identity), false);
});

Deno.test("a journal that went away gets no digest, and taking it never throws", async () => {
  await using dir = await tempDir();
  const { path, view, identity } = await readOnce(dir.path);
  await Deno.remove(path);
  assert.equal(await takeDigestLater(path, view, identity), false);
});
