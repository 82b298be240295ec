/**
 * The captured diff's one git process stands for the two it replaced (issue 32): its patch is the
 * bytes of plain `git diff <base> <tip>`, its counts those of that text, and its listing what
 * `git diff --raw --no-renames` lists — on hostile diffs, each made by an "agent" in a real
 * worktree and captured as a run captures it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { git, splitZ } from "../git/git.ts";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { parseUnifiedDiff, summarizeDiff } from "../diff/parse.ts";
import { sha256Hex } from "../journal/hash.ts";
import { Protection } from "../protect/judge.ts";
import { rawListingCounts } from "../protect/diff_paths.ts";
import { workspacePaths } from "../workspace.ts";
import { captureDiff } from "./diff_capture.ts";
import { createWorktree } from "./worktrees.ts";

const BYTES = new TextEncoder();

/** The served diff as it was made before: its own `git diff` process, in the repository. */
async function plainDiff(root: string, base: string, tip: string): Promise<Uint8Array> {
  const args = ["-c", "core.quotePath=true", "diff", "--no-color", "--no-ext-diff"];
  const rest = ["--no-textconv", "--src-prefix=a/", "--dst-prefix=b/", base, tip, "--"];
  return (await git([...args, ...rest], { cwd: root })).bytes;
}

/** The judged listing as it was read before: `--no-renames`, split as text. */
async function noRenamesListing(root: string, base: string, tip: string) {
  const args = ["diff", "--raw", "-z", "--no-renames", "--no-abbrev", "--no-ext-diff"];
  const raw = splitZ((await git([...args, base, tip, "--"], { cwd: root })).stdout);
  const out: { path: string; mode: string; id: string; oldMode: string; oldId: string }[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const [oldMode, mode, oldId, id] = raw[i].slice(1).split(" ");
    out.push({ path: raw[i + 1], mode, id, oldMode, oldId });
  }
  return out;
}

const byPath = <T extends { path: string }>(xs: readonly T[]) =>
  [...xs].sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : 0);

/** Write raw bytes (a name may hold any byte but NUL and `/`). */
async function put(dir: string, path: string | Uint8Array, bytes: string | Uint8Array) {
  const name = typeof path === "string" ? path : new TextDecoder("latin1").decode(path);
  await Deno.mkdir(join(dir, name, ".."), { recursive: true });
  await Deno.writeFile(join(dir, name), typeof bytes === "string" ? BYTES.encode(bytes) : bytes);
}

/** The base every case starts from. */
async function base(repo: TestRepo): Promise<string> {
  const r = repo.root;
  await put(r, "text.txt", "one\ntwo\nthree\n");
  await put(r, "gone.txt", "bye\n");
  await put(r, "bin.dat", new Uint8Array([0, 1, 2, 3, 0, 255]));
  await put(r, "move-me.txt", Array.from({ length: 40 }, (_, i) => `line ${i}\n`).join(""));
  await put(r, "edit-and-move.txt", Array.from({ length: 40 }, (_, i) => `row ${i}\n`).join(""));
  await put(r, "copy-source.txt", Array.from({ length: 40 }, (_, i) => `copy ${i}\n`).join(""));
  await put(r, "script.sh", "echo hi\n");
  await put(r, "dir/inner.txt", "inner\n");
  await put(r, "becomes-dir", "a file\n");
  await put(r, "crlf.txt", "a\r\nb\r\n");
  await Deno.symlink("text.txt", join(r, "link"));
  await Deno.symlink("dir", join(r, "link-to-file"));
  await put(r, "file-to-link", "plain\n");
  return await repo.commitAll("base");
}

/** What an agent does in its worktree, each a hostile shape for one listing or the other. */
const CASES: [string, (wt: string, repo: TestRepo) => Promise<void>][] = [
  ["nothing at all", async () => {}],
  ["a text edit, a deletion, a new file", async (wt) => {
    await put(wt, "text.txt", "one\n2\nthree\nfour\n");
    await Deno.remove(join(wt, "gone.txt"));
    await put(wt, "new.txt", "new\n");
  }],
  ["a binary file changed and one added", async (wt) => {
    await put(wt, "bin.dat", new Uint8Array([0, 9, 9, 0]));
    await put(wt, "more.bin", new Uint8Array([0, 0, 0, 1]));
  }],
  ["a rename as it is, and a rename with an edit", async (wt) => {
    await Deno.mkdir(join(wt, "moved"));
    await Deno.rename(join(wt, "move-me.txt"), join(wt, "moved/here.txt"));
    const text = await Deno.readTextFile(join(wt, "edit-and-move.txt"));
    await Deno.remove(join(wt, "edit-and-move.txt"));
    await put(wt, "edited-and-moved.txt", text.replace("row 3\n", "row three\n"));
  }],
  ["a mode change alone, and a mode change with an edit", async (wt) => {
    await Deno.chmod(join(wt, "script.sh"), 0o755);
    await put(wt, "crlf.txt", "a\r\nb\r\nc");
    await Deno.chmod(join(wt, "crlf.txt"), 0o755);
  }],
  ["links: added, retargeted, a link become a file, a file become a link", async (wt) => {
    await Deno.symlink("/etc/passwd", join(wt, "new-link"));
    await Deno.remove(join(wt, "link"));
    await Deno.symlink("dir/inner.txt", join(wt, "link"));
    await Deno.remove(join(wt, "link-to-file"));
    await put(wt, "link-to-file", "now a file\n");
    await Deno.remove(join(wt, "file-to-link"));
    await Deno.symlink("../../outside", join(wt, "file-to-link"));
  }],
  ["a file become a directory, a directory become a file", async (wt) => {
    await Deno.remove(join(wt, "becomes-dir"));
    await put(wt, "becomes-dir/x.txt", "x\n");
    await Deno.remove(join(wt, "dir"), { recursive: true });
    await put(wt, "dir", "a file now\n");
  }],
  ["names git quotes: newline, tab, quote, backslash, a byte not UTF-8, unicode", async (wt) => {
    await put(wt, "new\nline.txt", "n\n");
    await put(wt, "tab\there.txt", "t\n");
    await put(wt, 'quote"d.txt', "q\n");
    await put(wt, "back\\slash.txt", "b\n");
    await put(wt, new Uint8Array([0x62, 0x61, 0x64, 0xff, 0x2e, 0x74]), "bad utf-8\n");
    await put(wt, "ünïcødé/名前.txt", "u\n");
  }],
  ["names that imitate the formats: headers, records, options", async (wt) => {
    await put(wt, "a/b b/c", "x\n");
    await put(wt, ":100644 100644 0000 0000 M", "y\n");
    await put(wt, "-p", "z\n");
    await put(wt, " b/x", "w\n");
    await Deno.rename(join(wt, "move-me.txt"), join(wt, "R100"));
  }],
  ["content that imitates a diff and a raw record", async (wt) => {
    await put(
      wt,
      "text.txt",
      "diff --git a/x b/x\n:100644 100644 abc def M\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n",
    );
    await put(wt, "no-newline.txt", "last line without one");
  }],
  ["copies, when the configuration detects them (diff.renames=copies)", async (wt, repo) => {
    await repo.git(["config", "diff.renames", "copies"]);
    const text = await Deno.readTextFile(join(wt, "copy-source.txt"));
    await put(wt, "copied.txt", text);
    await put(wt, "copy-source.txt", text + "one more\n");
  }],
  ["a submodule's entry (gitlink) committed by the agent", async (wt, repo) => {
    const head = await repo.git(["rev-parse", "HEAD"], wt);
    await Deno.mkdir(join(wt, "sub"));
    await repo.git(["update-index", "--add", "--cacheinfo", `160000,${head},sub`], wt);
    await repo.git(["commit", "-q", "-m", "a gitlink"], wt);
  }],
  ["the agent's own commits, then more on top", async (wt, repo) => {
    await put(wt, "first.txt", "1\n");
    await repo.commitAll("agent 1", wt);
    await Deno.remove(join(wt, "first.txt"));
    await put(wt, "second.txt", "2\n");
  }],
];

Deno.test("captureDiff() serves plain `git diff base tip` byte for byte, counts that text and lists what `git diff --raw --no-renames` lists, from one git process (hostile diffs, table)", async () => {
  for (const [i, [name, change]] of CASES.entries()) {
    await using repo = await tempRepo();
    const start = await base(repo);
    const session = `s${i}`;
    const wt = await createWorktree(repo.root, session, start);
    await change(wt.path, repo);
    const journal = join(repo.root, ".sdd/runs/r1/journal.jsonl");
    const result = await captureDiff({
      root: repo.root,
      runId: "r1",
      taskId: `t${i}`,
      worktree: wt.path,
      base: start,
      journalPath: journal,
    });
    assert.ok(result.captured, `${name}: ${JSON.stringify(result)}`);
    const served = await Deno.readFile(result.path);
    const before = await plainDiff(repo.root, start, result.tip);
    assert.deepEqual(served, before, `${name}: the served bytes`);
    const summary = summarizeDiff(parseUnifiedDiff(new TextDecoder().decode(before)));
    assert.deepEqual(
      { sha256: result.sha256, added: result.added, removed: result.removed, files: result.files },
      {
        sha256: "sha256:" + sha256Hex(before),
        added: summary.added,
        removed: summary.removed,
        files: summary.files.length,
      },
      `${name}: the counts`,
    );
    assert.deepEqual(
      byPath(result.changes ?? []),
      byPath(await noRenamesListing(repo.root, start, result.tip)),
      `${name}: the listing`,
    );
  }
});

Deno.test("Protection.judge() of a captured diff asks git for no second diff, and judges as it would have", async () => {
  await using repo = await tempRepo();
  const start = await base(repo);
  const wt = await createWorktree(repo.root, "s1", start);
  await Deno.rename(join(wt.path, "move-me.txt"), join(wt.path, "service.yaml"));
  await Deno.remove(join(wt.path, "link"));
  await Deno.symlink("service.yaml", join(wt.path, "link"));
  await put(wt.path, "elsewhere/x.txt", "x\n");
  const result = await captureDiff({
    root: repo.root,
    runId: "r1",
    taskId: "t1",
    worktree: wt.path,
    base: start,
    journalPath: join(repo.root, ".sdd/runs/r1/journal.jsonl"),
  });
  assert.ok(result.captured);
  const protection = new Protection({
    paths: workspacePaths(repo.root),
    protectedPaths: ["move-me.txt", "service.yaml"],
    modules: [],
  });
  const diff = { cwd: repo.root, base: start, tip: result.tip, owned: ["service.yaml"] };
  const asked = rawListingCounts.asked;
  const fromCapture = await protection.judge({ ...diff, raw: result.changes });
  assert.equal(rawListingCounts.asked, asked, "no `git diff --raw` for the captured diff");
  const fromGit = await protection.judge(diff);
  assert.equal(rawListingCounts.asked, asked + 1);
  assert.deepEqual(fromCapture, fromGit);
  assert.deepEqual(fromCapture, {
    protected: ["link", "move-me.txt", "service.yaml"],
    outsideOwned: ["elsewhere/x.txt", "link", "move-me.txt"],
    oversized: [],
  });
});
