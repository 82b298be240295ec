/**
 * The board's caches never answer for bytes they did not verify (issue 9, spec §4.1 rule 1):
 * a settled journal is not re-read while its identity holds, yet any write — even one that
 * keeps the size and puts the mtime back — is seen at once; `ETag`/`If-None-Match` follow
 * the bytes served; the runs list follows every journal.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { serveBoard } from "./_e2e.ts";
import { journalText, sampleEvents, tempDir } from "./helpers.ts";
import { SETTLED_MS } from "../lib/journal/file_identity.ts";
import { LATER_DIGEST_MIN_BYTES } from "../lib/journal/later_digest.ts";
import { IncrementalJournal } from "../lib/journal/incremental.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import type { JournalEvent } from "../lib/journal/row.ts";
import { receiptOf } from "../lib/board/projection.ts";
import { BOARD_FOLD_SINK } from "../lib/board/sink.ts";

const enc = (s: string) => new TextEncoder().encode(s);

async function workspaceWith(runs: Record<string, string>) {
  const dir = await tempDir();
  for (const [runId, text] of Object.entries(runs)) {
    await Deno.mkdir(join(dir.path, ".sdd/runs", runId), { recursive: true });
    await Deno.writeTextFile(join(dir.path, ".sdd/runs", runId, "journal.jsonl"), text);
  }
  return dir;
}

const settle = () => new Promise((r) => setTimeout(r, SETTLED_MS + 200));

/**
 * `answer()` while a writer holds the journal's lock, so reading the journal would wait for it:
 * undefined when it did not answer within 2 s (it tried to read).
 */
async function withoutReading<T>(path: string, answer: () => Promise<T>): Promise<T | undefined> {
  using file = await Deno.open(path, { read: true, write: true });
  await file.lock(true);
  let timer: number | undefined;
  try {
    return await Promise.race([
      answer(),
      new Promise<undefined>((r) => timer = setTimeout(r, 2000)),
    ]);
  } finally {
    clearTimeout(timer);
    await file.unlock();
  }
}

Deno.test("an in-place edit that keeps the size and restores the mtime is still seen at once", async () => {
  const text = journalText(sampleEvents("r1"));
  await using ws = await workspaceWith({ r1: text });
  await settle();
  await using server = await serveBoard(ws.path);
  const url = `${server.url}/review-board/runs/r1`;
  const first = await (await fetch(url)).json();
  assert.equal(first.journal_verified, true);
  assert.equal((await (await fetch(url)).json()).journal_verified, true); // served from the cache

  const path = join(ws.path, ".sdd/runs/r1/journal.jsonl");
  const { mtime } = await Deno.stat(path);
  const edited = text.replace('"First"', '"Fir5t"');
  assert.equal(edited.length, text.length);
  await Deno.writeTextFile(path, edited);
  await Deno.utime(path, mtime!, mtime!); // a careful forger puts the time back
  const after = await (await fetch(url)).json();
  assert.equal(after.journal_verified, false);
  assert.notEqual(after.board.columns.running[0]?.title, "First");
});

Deno.test("ETag follows the served bytes: 304 while unchanged, a new tag after an append or a tamper", async () => {
  const text = journalText(sampleEvents("r1"));
  await using ws = await workspaceWith({ r1: text });
  await using server = await serveBoard(ws.path);
  const url = `${server.url}/review-board/runs/r1`;
  const res = await fetch(url);
  const etag = res.headers.get("etag")!;
  const body = await res.text();
  assert.match(etag, /^"[0-9a-f]{64}"$/);
  assert.deepEqual(JSON.parse(body).run_id, "r1");
  const same = await fetch(url, { headers: { "If-None-Match": etag } });
  assert.equal(same.status, 304);
  assert.equal(await same.text(), "");

  const path = join(ws.path, ".sdd/runs/r1/journal.jsonl");
  await Deno.writeTextFile(
    path,
    journalText([...sampleEvents("r1"), {
      type: "task_completed",
      data: { task_id: "t2" },
    }]),
  );
  const grown = await fetch(url, { headers: { "If-None-Match": etag } });
  assert.equal(grown.status, 200);
  const grownTag = grown.headers.get("etag")!;
  assert.notEqual(grownTag, etag);
  assert.equal((await grown.json()).event_count, 6);

  // Only the hash of the last row changes: the board is the same, the verdict is not.
  const rows = (await Deno.readTextFile(path)).trimEnd().split("\n");
  const last = JSON.parse(rows.at(-1)!);
  last.hash = "f".repeat(64);
  rows[rows.length - 1] = JSON.stringify(last);
  await Deno.writeTextFile(path, rows.join("\n") + "\n");
  const tampered = await fetch(url, { headers: { "If-None-Match": grownTag } });
  assert.equal(tampered.status, 200);
  assert.equal((await tampered.json()).journal_verified, false);
});

Deno.test("the runs list follows every journal, also after it was cached", async () => {
  const runs: Record<string, string> = {};
  for (let i = 0; i < 30; i++) runs[`run-${i}`] = journalText(sampleEvents(`run-${i}`));
  await using ws = await workspaceWith(runs);
  await settle();
  await using server = await serveBoard(ws.path);
  const list = async () => (await (await fetch(`${server.url}/review-board/runs`)).json()).runs;
  assert.equal((await list()).length, 30);
  assert.ok((await list()).every((r: { event_count: number }) => r.event_count === 5));
  const path = join(ws.path, ".sdd/runs/run-7/journal.jsonl");
  await Deno.writeTextFile(
    path,
    journalText([...sampleEvents("run-7"), {
      type: "run_completed",
      data: { run_id: "run-7", status: "failed" },
    }]),
  );
  const after = await list();
  const seven = after.find((r: { run_id: string }) => r.run_id === "run-7");
  assert.equal(seven.event_count, 6);
  assert.equal(seven.status, "failed");
});

Deno.test("a journal that settles after its first read is listed from its summary, not folded again", async () => {
  const runs: Record<string, string> = {};
  for (let i = 0; i < 20; i++) runs[`run-${i}`] = journalText(sampleEvents(`run-${i}`));
  await using ws = await workspaceWith(runs);
  const path = join(ws.path, ".sdd/runs/run-0/journal.jsonl");
  const { projectJournal, journalSummary } = await import("../lib/board/projection.ts");
  await projectJournal("run-0", path); // written just now: its identity has not settled
  await settle();
  await projectJournal("run-0", path); // the same bytes, now settled
  for (let i = 1; i < 20; i++) { // more journals than projections are kept: run-0's goes
    await projectJournal(`run-${i}`, join(ws.path, `.sdd/runs/run-${i}/journal.jsonl`));
  }
  const summary = await withoutReading(path, () => journalSummary("run-0", path));
  assert.ok(summary, "the summary was not kept: listing runs re-read (and re-folded) the journal");
  assert.equal(summary.event_count, 5);
});

Deno.test("listing many runs does not push a board out of the projection cache", async () => {
  const runs: Record<string, string> = {};
  for (let i = 0; i < 40; i++) runs[`run-${i}`] = journalText(sampleEvents(`run-${i}`));
  await using ws = await workspaceWith(runs);
  await settle();
  const { projectJournal } = await import("../lib/board/projection.ts");
  const { listRuns } = await import("../lib/runs/runs.ts");
  const { workspacePaths } = await import("../lib/workspace.ts");
  const path = join(ws.path, ".sdd/runs/run-3/journal.jsonl");
  const board = await projectJournal("run-3", path);
  assert.equal((await listRuns(workspacePaths(ws.path))).length, 40);
  const again = await withoutReading(path, () => projectJournal("run-3", path));
  assert.ok(again, "the list evicted the board's projection: it was read again");
  assert.equal(again.receipt.projection_hash, board.receipt.projection_hash);
});

/** Events of a journal over LATER_DIGEST_MIN_BYTES: claims with long titles, completions. */
function largeRunEvents(runId: string): JournalEvent[] {
  const events: JournalEvent[] = [{ type: "run_started", data: { run_id: runId, plan: "large" } }];
  for (let i = 0; events.length < 9_000; i++) {
    const task_id = `t${i}`;
    events.push({
      type: "task_claimed",
      data: { task_id, session_id: `s${i}`, title: `Task ${i} `.padEnd(400, "x"), role: "r" },
    });
    events.push({ type: "task_completed", data: { task_id } });
  }
  return events;
}

Deno.test("a large settled journal (fingerprinted after its answer) is proven on its first projection, and later appends and edits are seen", async () => {
  const events = largeRunEvents("big");
  const text = journalText(events);
  assert.ok(text.length >= LATER_DIGEST_MIN_BYTES, `${text.length} bytes: not a large journal`);
  const lines = text.trimEnd().split("\n");
  const tampered = [...lines];
  tampered[4321] = tampered[4321].replace('"Task 2160 ', '"Task 2l60 ');
  assert.notEqual(tampered[4321], lines[4321]);
  await using ws = await workspaceWith({ big: text, forged: tampered.join("\n") + "\n" });
  await settle();
  const { afterAnswersDone, boardAsFolded, projectJournal } = await import(
    "../lib/board/projection.ts"
  );
  const path = join(ws.path, ".sdd/runs/big/journal.jsonl");

  // A row changed without its hash is refused on the first projection, as on any read.
  const forged = await projectJournal("forged", join(ws.path, ".sdd/runs/forged/journal.jsonl"));
  assert.equal(forged.receipt.journal_verified, false);
  assert.equal(forged.fault?.seq, 4321);

  // The board is the one the inline path folds, byte for byte.
  const first = await projectJournal("big", path);
  const inline = receiptOf("big", new IncrementalJournal(BOARD_FOLD_SINK).update(enc(text)));
  assert.equal(first.receipt.journal_verified, true);
  assert.equal(first.receipt.projection_hash, inline.receipt.projection_hash);
  assert.equal(first.receipt.journal_head, inline.receipt.journal_head);
  await afterAnswersDone(); // its fingerprint, taken after the answer

  // Once fingerprinted, an append is folded onto it; an edit of the prefix is still seen.
  await appendEvents(path, [{ type: "task_merged", data: { task_id: "t0" } }]);
  const grown = await projectJournal("big", path);
  assert.equal(grown.receipt.journal_verified, true);
  assert.equal(grown.receipt.event_count, events.length + 1);
  assert.equal(boardAsFolded(grown)?.board.columns.merged[0]?.task_id, "t0");
  const now = await Deno.readTextFile(path);
  await Deno.writeTextFile(path, now.replace('"Task 17 ', '"Task l7 '));
  const edited = await projectJournal("big", path);
  assert.equal(edited.receipt.journal_verified, false);
  assert.equal(edited.fault?.seq, 35);
  await afterAnswersDone();
});
