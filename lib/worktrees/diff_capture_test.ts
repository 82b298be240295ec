import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { parseUnifiedDiff, summarizeDiff } from "../diff/parse.ts";
import { sha256Hex } from "../journal/hash.ts";
import { captureDiff } from "./diff_capture.ts";
import { createWorktree } from "./worktrees.ts";

async function journalRows(path: string) {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
}

Deno.test("captureDiff() equals `git diff HEAD` when the agent neither committed nor created files", async () => {
  await using repo = await tempRepo({ "a.txt": "one\ntwo\n", "b.txt": "bee\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await repo.write("a.txt", "one\n2\nthree\n", wt.path);
  await Deno.remove(join(wt.path, "b.txt"));
  const expected = await repo.git(["diff", "HEAD"], wt.path) + "\n";
  const journal = join(repo.root, ".sdd/runs/r1/journal.jsonl");
  const result = await captureDiff({
    root: repo.root,
    runId: "r1",
    taskId: "t1",
    worktree: wt.path,
    base,
    journalPath: journal,
  });
  assert.equal(result.captured, true);
  const stored = await Deno.readFile(join(repo.root, ".sdd/runs/r1/review/diffs/t1.diff"));
  assert.equal(new TextDecoder().decode(stored), expected);
  const rows = await journalRows(journal);
  assert.equal(rows.length, 1);
  assert.equal(rows[0].type, "task_diff_captured");
  assert.deepEqual(rows[0].data, {
    task_id: "t1",
    sha256: "sha256:" + sha256Hex(stored),
    added: 2,
    removed: 2,
    files: 2,
  });
});

Deno.test("captureDiff() includes new files and the agent's own commits, and commits leftovers", async () => {
  await using repo = await tempRepo({ "a.txt": "a\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await repo.write("committed.txt", "by the agent\n", wt.path);
  await repo.commitAll("agent commit", wt.path);
  await repo.write("src/new.ts", "export const x = 1;\n", wt.path);
  const journal = join(repo.root, ".sdd/runs/r1/journal.jsonl");
  const result = await captureDiff({
    root: repo.root,
    runId: "r1",
    taskId: "t1",
    worktree: wt.path,
    base,
    journalPath: journal,
  });
  assert.ok(result.captured);
  assert.equal(result.tip, await repo.git(["rev-parse", "agent/s1"]));
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
  const text = await Deno.readTextFile(result.path);
  const summary = summarizeDiff(parseUnifiedDiff(text));
  assert.deepEqual(summary.files.sort(), ["committed.txt", "src/new.ts"]);
  assert.equal(result.files, 2);
  assert.equal(result.added, 2);
  assert.match(text, /new file mode/);
});

Deno.test("captureDiff() is fail-open: no worktree or a git failure records nothing", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  const journal = join(repo.root, ".sdd/runs/r1/journal.jsonl");
  const missing = await captureDiff({
    root: repo.root,
    runId: "r1",
    taskId: "t1",
    worktree: join(repo.root, ".sdd/worktrees/gone"),
    base,
    journalPath: journal,
  });
  assert.equal(missing.captured, false);
  assert.match((missing as { reason: string }).reason, /no worktree/);
  const wt = await createWorktree(repo.root, "s1", base);
  const badBase = await captureDiff({
    root: repo.root,
    runId: "r1",
    taskId: "t1",
    worktree: wt.path,
    base: "0".repeat(40),
    journalPath: journal,
  });
  assert.equal(badBase.captured, false);
  assert.match((badBase as { reason: string }).reason, /git/);
  const badId = await captureDiff({
    root: repo.root,
    runId: "../x",
    taskId: "t1",
    worktree: wt.path,
    base,
    journalPath: journal,
  });
  assert.equal(badId.captured, false);
  assert.deepEqual(await journalRows(journal), []);
  assert.equal(
    await Deno.stat(join(repo.root, ".sdd/runs/r1/review")).then(() => true, () => false),
    false,
  );
});

Deno.test("captureDiff() stores the first whole files of a patch too large to show, and says how large it was", async () => {
  await using repo = await tempRepo({ "a.txt": "a\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await repo.write("a.txt", "a\nsmall change\n", wt.path);
  await repo.write("b.txt", "line of text\n".repeat(2000), wt.path); // ~26 KB of patch
  await repo.write("c.txt", "c\n", wt.path);
  const journal = join(repo.root, ".sdd/runs/r1/journal.jsonl");
  const whole = await repo.git(["diff", base], wt.path).catch(() => "");
  const result = await captureDiff({
    root: repo.root,
    runId: "r1",
    taskId: "t1",
    worktree: wt.path,
    base,
    journalPath: journal,
    maxShownBytes: 4096,
  });
  assert.equal(result.captured, true);
  if (!result.captured) return;
  const stored = await Deno.readFile(result.path);
  const text = new TextDecoder().decode(stored);
  assert.ok(stored.length <= 4096);
  assert.ok(text.startsWith("diff --git a/a.txt b/a.txt\n"), text);
  assert.ok(!text.includes("b.txt"), "a file that does not fit whole is left out");
  const full = await repo.git(["diff", base, result.tip]);
  assert.ok(whole !== undefined && full.length > 20_000);
  const [row] = await journalRows(journal);
  assert.deepEqual(row.data, {
    task_id: "t1",
    sha256: "sha256:" + sha256Hex(stored),
    added: 1,
    removed: 0,
    files: 1,
    truncated: { bytes: full.length + 1, files: 3 },
  });
  assert.equal(result.changes?.length, 3, "the listing is whole: the judgement reads it");
});
