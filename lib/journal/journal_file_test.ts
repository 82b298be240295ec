import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents, groupCommitCounts, JournalPoisonedError } from "./journal_file.ts";
import { verifyJournalText } from "./verify.ts";
import { journalText, sampleEvents, tempDir } from "../../tests/helpers.ts";

Deno.test("appendEvents() starts a chain at seq 0 with the zero prev and returns assigned seqs", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "runs", "r1", "journal.jsonl");
  const rows = await appendEvents(path, sampleEvents().slice(0, 2));
  assert.deepEqual(rows.map((r) => r.seq), [0, 1]);
  assert.equal(rows[0].row.prev, "0".repeat(64));
  assert.equal(rows[1].row.prev, rows[0].hash);
  const report = verifyJournalText(await Deno.readTextFile(path));
  assert.equal(report.verified, true);
  assert.equal(report.head, rows[1].hash);
});

Deno.test("appendEvents() resumes from the verified head of an existing journal", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  await Deno.writeTextFile(path, journalText(sampleEvents()));
  const [row] = await appendEvents(path, [{ type: "task_completed", data: { task_id: "t2" } }]);
  assert.equal(row.seq, 5);
  assert.equal(verifyJournalText(await Deno.readTextFile(path)).verified, true);
});

Deno.test("appendEvents() completes a last row that lacks its newline instead of gluing onto it", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  await Deno.writeTextFile(path, journalText(sampleEvents()).trimEnd());
  await appendEvents(path, [{ type: "task_completed", data: { task_id: "t2" } }]);
  const report = verifyJournalText(await Deno.readTextFile(path));
  assert.equal(report.verified, true);
  assert.equal(report.rowCount, 6);
});

Deno.test("appendEvents() refuses to extend a poisoned chain and writes nothing", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  const tampered = journalText(sampleEvents()).replace('"First"', '"Forged"');
  await Deno.writeTextFile(path, tampered);
  await assert.rejects(
    appendEvents(path, [{ type: "task_completed", data: { task_id: "t2" } }]),
    JournalPoisonedError,
  );
  assert.equal(await Deno.readTextFile(path), tampered);
});

Deno.test("appendEvents() refuses to extend a torn tail", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  const torn = journalText(sampleEvents()) + '{"data":{"task_id"';
  await Deno.writeTextFile(path, torn);
  await assert.rejects(
    appendEvents(path, [{ type: "task_completed", data: { task_id: "t2" } }]),
    /torn tail/,
  );
  assert.equal(await Deno.readTextFile(path), torn);
});

Deno.test("appendEvents() from four processes at once leaves one linear chain", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  const script = join(dir.path, "writer.ts");
  const module = new URL("./journal_file.ts", import.meta.url).href;
  await Deno.writeTextFile(
    script,
    `import { appendEvents } from ${JSON.stringify(module)};
     const [path, who] = Deno.args;
     for (let i = 0; i < 40; i++) await appendEvents(path, [{ type: "task_claimed", data: { task_id: who + "-" + i, session_id: who } }]);`,
  );
  const writers = ["a", "b", "c", "d"].map((who) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script, path, who],
      stderr: "piped",
      stdout: "null",
    }).output()
  );
  for (const result of await Promise.all(writers)) {
    assert.ok(result.success, new TextDecoder().decode(result.stderr));
  }
  const report = verifyJournalText(await Deno.readTextFile(path));
  assert.equal(report.verified, true, report.firstFault?.message ?? "");
  assert.equal(report.rowCount, 160);
  const ids = new Set(report.rows.map((r) => r.row.data.task_id));
  assert.equal(ids.size, 160);
});

Deno.test("appendEvents() in one process serialises a burst of concurrent calls", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  const results = await Promise.all(
    Array.from(
      { length: 50 },
      (_, i) => appendEvents(path, [{ type: "task_claimed", data: { task_id: `t${i}` } }]),
    ),
  );
  assert.deepEqual(
    results.map((r) => r[0].seq).sort((a, b) => a - b),
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.equal(verifyJournalText(await Deno.readTextFile(path)).verified, true);
});

Deno.test("appendEvents() with `after` keeps its place in line, and writes nothing once the earlier append failed", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  const row = (id: string) => [{ type: "task_completed", data: { task_id: id } }];
  // One writer's rows go in the order asked, ahead of another writer's asked after them.
  const a = appendEvents(path, row("a"));
  const b = appendEvents(path, row("b"), { after: a });
  const c = appendEvents(path, row("c"));
  await Promise.all([a, b, c]);
  const ids = async () =>
    verifyJournalText(await Deno.readTextFile(path)).rows.map((r) => r.row.data.task_id);
  assert.deepEqual(await ids(), ["a", "b", "c"]);
  // Its earlier append failed: nothing of it is written, and the failure is its own.
  const failed = Promise.reject(new Error("disk full"));
  failed.catch(() => {});
  const d = appendEvents(path, row("d"), { after: failed });
  await assert.rejects(d, /disk full/);
  await assert.rejects(appendEvents(path, row("e"), { after: d }), /disk full/);
  assert.deepEqual(await ids(), ["a", "b", "c"]);
});

Deno.test("appendEvents() writes the appends asked for while one is written in one turn, each with its own rows", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  const results = await Promise.all(
    Array.from(
      { length: 40 },
      (_, i) =>
        appendEvents(path, [
          { type: "task_claimed", data: { task_id: `t${i}` } },
          { type: "task_completed", data: { task_id: `t${i}` } },
        ]),
    ),
  );
  const counts = groupCommitCounts(path);
  assert.equal(counts.appends, 40);
  assert.ok(counts.turns <= 2, `the first alone, the rest together (${counts.turns} writes)`);
  for (const [i, rows] of results.entries()) {
    assert.deepEqual(rows.map((r) => r.row.data.task_id), [`t${i}`, `t${i}`], "its own rows");
    assert.equal(rows[1].seq, rows[0].seq + 1);
  }
  const report = verifyJournalText(await Deno.readTextFile(path));
  assert.equal(report.verified, true);
  assert.deepEqual(
    report.rows.map((r) => r.row.data.task_id),
    Array.from({ length: 40 }, (_, i) => [`t${i}`, `t${i}`]).flat(),
    "in the order asked",
  );
});

Deno.test("appendEvents(): in a turn, an append whose earlier append failed is left out with that failure, its own later ones too, and the others are written", async () => {
  await using dir = await tempDir();
  const path = join(dir.path, "journal.jsonl");
  const row = (id: string) => [{ type: "task_completed", data: { task_id: id } }];
  const first = appendEvents(path, row("first")); // holds the journal while the rest line up
  const failed = Promise.reject(new Error("disk full"));
  failed.catch(() => {});
  const a = appendEvents(path, row("a"));
  const b = appendEvents(path, row("b"), { after: failed });
  const c = appendEvents(path, row("c"), { after: b });
  const d = appendEvents(path, row("d"), { after: a });
  await first;
  await assert.rejects(b, /disk full/);
  await assert.rejects(c, /disk full/);
  assert.equal((await a)[0].row.data.task_id, "a");
  assert.equal((await d)[0].row.data.task_id, "d");
  const ids = verifyJournalText(await Deno.readTextFile(path)).rows.map((r) => r.row.data.task_id);
  assert.deepEqual(ids, ["first", "a", "d"]);
});
