import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../journal/journal_file.ts";
import { runIdOfJournalPath, watchRunJournals } from "./journal_watch.ts";

function waitFor(check: () => boolean, ms = 3000): Promise<void> {
  const start = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) return resolve();
      if (Date.now() - start > ms) return reject(new Error(`condition not met within ${ms} ms`));
      setTimeout(tick, 10);
    };
    tick();
  });
}

Deno.test("runIdOfJournalPath() names the run of a journal and nothing else", () => {
  assert.equal(runIdOfJournalPath("/w/runs", "/w/runs/r-1/journal.jsonl"), "r-1");
  assert.equal(runIdOfJournalPath("/w/runs", "/w/runs/r-1/review/diffs/t.diff"), undefined);
  assert.equal(runIdOfJournalPath("/w/runs", "/w/other/journal.jsonl"), undefined);
});

Deno.test("watchRunJournals() reports a burst of appends once per run", async () => {
  const dir = await Deno.makeTempDir();
  const runs = join(dir, "runs");
  await Deno.mkdir(join(runs, "r1"), { recursive: true });
  const seen: string[] = [];
  // A debounce far above what two appends take even on a loaded machine (50 ms was not: the two
  // appends were sometimes reported apart in CI-like load), so the burst is one by construction.
  const watch = watchRunJournals(runs, (id) => seen.push(id), { debounceMs: 1500, pollMs: 200 });
  try {
    await new Promise((r) => setTimeout(r, 50));
    const path = join(runs, "r1", "journal.jsonl");
    await appendEvents(path, [{ type: "run_started", data: { run_id: "r1" } }]);
    await appendEvents(path, [{ type: "task_claimed", data: { task_id: "t1" } }]);
    await waitFor(() => seen.length >= 1);
    await new Promise((r) => setTimeout(r, 500)); // watcher, debounce and two polls
    assert.deepEqual(seen, ["r1"]);
  } finally {
    await watch.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("watchRunJournals() notices a runs directory created after it started", async () => {
  const dir = await Deno.makeTempDir();
  const runs = join(dir, "runs");
  const seen: string[] = [];
  const watch = watchRunJournals(runs, (id) => seen.push(id), { pollMs: 50 });
  try {
    await appendEvents(join(runs, "late", "journal.jsonl"), [{ type: "run_started", data: {} }]);
    await waitFor(() => seen.includes("late"));
  } finally {
    await watch.close();
    await Deno.remove(dir, { recursive: true });
  }
});
