import assert from "node:assert/strict";
import { join } from "node:path";
import { gitText } from "../git/git.ts";
import { tempRepo } from "../git/_test_repo.ts";
import { RACY_MS } from "../git/remembered_config.ts";
import {
  DEFAULT_IGNORES,
  exactIgnoreLine,
  excludesFileCounts,
  writeWorktreeIgnores,
} from "./ignores.ts";
import { historyListingCounts } from "./keep_out.ts";
import { commitPartialWork, createWorktree } from "./worktrees.ts";

/** Files an agent's tools leave behind, and whether `git add -A` may stage each. */
const LEFT_BEHIND: [string, boolean][] = [
  ["calc/__pycache__/core.cpython-311.pyc", false],
  ["tests/__pycache__/test_core.cpython-311-pytest-8.0.pyc", false],
  ["stray.pyc", false],
  [".pytest_cache/v/cache/nodeids", false],
  [".mypy_cache/3.11/calc.meta.json", false],
  [".ruff_cache/0.4.0/123", false],
  [".tox/py311/log.txt", false],
  ["calc.egg-info/PKG-INFO", false],
  ["src/calc.egg-info/SOURCES.txt", false],
  [".coverage", false],
  ["coverage/lcov.info", false],
  ["web/coverage/index.html", false],
  [".DS_Store", false],
  ["calc/mul.py", true],
  ["tests/test_mul.py", true],
  ["docs/coverage.md", true], // only the directory `coverage/` is a cache
  ["pycache.txt", true],
];

Deno.test("default ignores: git add -A in an agent worktree stages the work, never the build caches (table)", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n", "calc/__init__.py": "" });
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES);
  for (const [path] of LEFT_BEHIND) await repo.write(path, "x\n", wt.path);
  await commitPartialWork(wt.path, "work");
  const committed = new Set(
    (await repo.git(["ls-tree", "-r", "--name-only", "HEAD"], wt.path)).split("\n"),
  );
  for (const [path, staged] of LEFT_BEHIND) {
    assert.equal(committed.has(path), staged, `${path} ${staged ? "is" : "is not"} committed`);
  }
});

Deno.test("default ignores change nothing of the user's checkout: its git status, .gitignore and info/exclude", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n", ".gitignore": "*.log\n" });
  const exclude = join(repo.root, ".git/info/exclude");
  await repo.write("mine.pyc", "the user's own untracked file\n");
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  const before = await Deno.readTextFile(exclude); // .sdd/ is in it (DESIGN.md §7)
  const status = await repo.git(["status", "--porcelain"]);
  await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES);
  await repo.write("x.pyc", "junk\n", wt.path);
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
  assert.equal(
    await repo.git(["status", "--porcelain"]),
    status,
    "the checkout's status as before",
  );
  assert.match(status, /\?\? mine\.pyc/);
  assert.equal(await repo.read(".gitignore"), "*.log\n");
  assert.equal(await Deno.readTextFile(exclude), before, "the common info/exclude untouched");
  assert.equal(await repo.git(["config", "--get", "extensions.worktreeConfig"]), "true");
});

Deno.test("a file the repository already tracks stays tracked: its changes are committed, nothing is kept out", async () => {
  await using repo = await tempRepo({
    "README.md": "hi\n",
    "fixtures/sample.pyc": "v1\n",
    "coverage/README.md": "how we measure\n",
  });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES);
  await repo.write("fixtures/sample.pyc", "v2\n", wt.path);
  await repo.write("coverage/README.md", "how we measure, again\n", wt.path);
  await repo.write("coverage/new.info", "junk\n", wt.path);
  const work = await commitPartialWork(wt.path, "work", { base });
  assert.deepEqual(work.leftOut, []);
  const changed = await repo.git(["diff", "--name-only", base, "HEAD"], wt.path);
  assert.deepEqual(changed.split("\n"), ["coverage/README.md", "fixtures/sample.pyc"]);
});

/** Every commit from `base` (excluded) to `tip` that holds `path` in its tree. */
async function commitsHolding(
  repo: { git: (a: string[], cwd?: string) => Promise<string> },
  base: string,
  tip: string,
  path: string,
  cwd: string,
) {
  const commits = (await repo.git(["rev-list", `${base}..${tip}`], cwd)).split("\n").filter(
    Boolean,
  );
  const holding: string[] = [];
  for (const c of commits) {
    const tree = await repo.git(["ls-tree", "-r", "--name-only", c], cwd);
    if (tree.split("\n").includes(path)) holding.push(c);
  }
  return holding;
}

Deno.test("commitPartialWork() with a base never commits what an agent forced in (git add -f); the files stay on disk", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await writeWorktreeIgnores(wt.path, [...DEFAULT_IGNORES, exactIgnoreLine(".env")]);
  await repo.write("app.py", "print(1)\n", wt.path);
  await repo.write("__pycache__/app.cpython-311.pyc", "\0binary\n", wt.path);
  await repo.write(".env", "SECRET=1\n", wt.path);
  await repo.git(["add", "-f", "."], wt.path);
  const work = await commitPartialWork(wt.path, "work", { base });
  assert.deepEqual(work.leftOut, [".env", "__pycache__/app.cpython-311.pyc"]);
  assert.equal(work.rewritten, 0);
  assert.equal(await repo.git(["diff", "--name-only", base, "HEAD"], wt.path), "app.py");
  assert.deepEqual(await commitsHolding(repo, base, work.tip, ".env", wt.path), []);
  assert.equal(await Deno.readTextFile(`${wt.path}/.env`), "SECRET=1\n", "still on disk");
});

Deno.test("commitPartialWork() with a base rewrites the agent's own commits that held a copied file into one: no commit reachable holds it", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await writeWorktreeIgnores(wt.path, [...DEFAULT_IGNORES, exactIgnoreLine(".env")]);
  await repo.write(".env", "SECRET=1\n", wt.path);
  await repo.write("app.py", "print(1)\n", wt.path);
  await repo.git(["add", "-f", "."], wt.path);
  await repo.git(["commit", "-q", "-m", "agent: app and env"], wt.path);
  // It even un-ignores the file in .gitignore and removes it again in a later commit.
  await repo.write(".gitignore", "!.env\n", wt.path);
  await repo.git(["rm", "-q", "--cached", ".env"], wt.path);
  await repo.git(["add", ".gitignore"], wt.path);
  await repo.git(["commit", "-q", "-m", "agent: drop env"], wt.path);
  await repo.write("coverage/lcov.info", "TN:\n", wt.path);
  await repo.git(["add", "-f", "coverage/lcov.info"], wt.path);
  await repo.git(["commit", "-q", "-m", "agent: coverage"], wt.path);
  const work = await commitPartialWork(wt.path, "service: work of t", { base });
  assert.equal(work.rewritten, 3);
  assert.deepEqual(work.leftOut, [".env", "coverage/lcov.info"]);
  assert.equal(await repo.git(["rev-list", "--count", `${base}..${work.tip}`], wt.path), "1");
  assert.equal(await repo.git(["rev-parse", `${work.tip}^`], wt.path), base);
  for (const path of [".env", "coverage/lcov.info"]) {
    assert.deepEqual(await commitsHolding(repo, base, work.tip, path, wt.path), [], path);
  }
  const changed = await repo.git(["diff", "--name-only", base, work.tip], wt.path);
  assert.deepEqual(changed.split("\n"), [".gitignore", "app.py"]);
  assert.match(
    await repo.git(["log", "-1", "--format=%B", work.tip], wt.path),
    /rewrote the agent's 3 commit\(s\)/,
  );
  assert.equal(await repo.git(["rev-parse", "HEAD"], wt.path), work.tip, "the branch is at it");
});

Deno.test("commitPartialWork() lists no history when the agent made no commit of its own (HEAD is still the base), and does when it did", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await writeWorktreeIgnores(wt.path, [exactIgnoreLine(".env")]);
  await repo.write("app.py", "print(1)\n", wt.path);
  const logs = historyListingCounts.logs;
  const work = await commitPartialWork(wt.path, "work", { base });
  assert.equal(historyListingCounts.logs, logs);
  assert.equal(work.committed, true);
  // Its own commit now sits on the base: the next look lists it.
  await repo.write("more.py", "print(2)\n", wt.path);
  await commitPartialWork(wt.path, "more", { base });
  assert.equal(historyListingCounts.logs, logs + 1);
});

Deno.test("commitPartialWork() is not fooled by a HEAD on a ref of the worktree's own with a decoy of the base in the common directory: nothing reachable from the tip holds the forced-in file", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  await writeWorktreeIgnores(wt.path, [exactIgnoreLine(".env")]);
  // The agent moves HEAD to refs/worktree/x (kept in the worktree's own git directory) and
  // commits a secret there; the common directory's refs/worktree/x names the base.
  await repo.git(["update-ref", "refs/worktree/x", base], wt.path);
  await repo.git(["symbolic-ref", "HEAD", "refs/worktree/x"], wt.path);
  await repo.write(".env", "SECRET=1\n", wt.path);
  await repo.git(["add", "-f", ".env"], wt.path);
  await repo.git(["commit", "-q", "-m", "secret"], wt.path);
  const secret = await repo.git(["rev-parse", "HEAD"], wt.path);
  const decoy = join(repo.root, ".git", "refs", "worktree", "x");
  await Deno.mkdir(join(decoy, ".."), { recursive: true });
  await Deno.writeTextFile(decoy, `${base}\n`);
  await repo.write("app.py", "print(1)\n", wt.path);
  const work = await commitPartialWork(wt.path, "work", { base });
  assert.equal(await repo.git(["rev-parse", "HEAD"], wt.path), work.tip);
  const reachable = await repo.git(["rev-list", work.tip], wt.path);
  assert.ok(!reachable.split("\n").includes(secret));
  assert.deepEqual(await commitsHolding(repo, base, work.tip, ".env", wt.path), []);
});

Deno.test("a linked directory is never staged, though git sees the link as a file (node_modules/ in .gitignore does not match it)", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n", ".gitignore": "node_modules/\n" });
  await Deno.mkdir(join(repo.root, "node_modules/left-pad"), { recursive: true });
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  await Deno.symlink(join(repo.root, "node_modules"), join(wt.path, "node_modules"));
  assert.match(await repo.git(["status", "--porcelain"], wt.path), /node_modules/, "the trap");
  await writeWorktreeIgnores(wt.path, [exactIgnoreLine("node_modules")]);
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
});

Deno.test("the user's global excludes still apply in the worktree (core.excludesFile is replaced there)", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n" });
  const global = join(repo.root, "..", `global-ignore-${crypto.randomUUID()}`);
  await Deno.writeTextFile(global, "*.swp\n");
  try {
    await repo.git(["config", "core.excludesFile", global]);
    const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
    await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES);
    await writeWorktreeIgnores(wt.path, DEFAULT_IGNORES); // a second preparation copies it once
    await repo.write(".notes.swp", "editor\n", wt.path);
    await repo.write("a.pyc", "junk\n", wt.path);
    assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
  } finally {
    await Deno.remove(global);
  }
});

/** Past the racy window: the configuration files are old from here on. */
const waitOutRacyWindow = () => new Promise((r) => setTimeout(r, RACY_MS + 200));

/** A new worktree given its ignores: the exclude file's text, and whether git was asked. */
async function preparedTree(root: string, session: string): Promise<[string, boolean]> {
  const asked = excludesFileCounts.asked;
  const tree = await createWorktree(
    root,
    session,
    await gitText(["rev-parse", "main"], { cwd: root }),
  );
  const file = await writeWorktreeIgnores(tree.path, [".venv/"]);
  return [await Deno.readTextFile(file!), excludesFileCounts.asked > asked];
}

Deno.test("the user's excludes file is asked of git once while the configuration files stand: later worktrees of the repository start with no `git config`", async () => {
  await using repo = await tempRepo();
  const global = join(repo.root, ".git", "user-ignore");
  await Deno.writeTextFile(global, "*.swp\n");
  await repo.git(["config", "extensions.worktreeConfig", "true"]);
  await repo.git(["config", "core.excludesFile", global]);
  await waitOutRacyWindow(); // a file changed within the window that names the key is not trusted
  const [first, asked] = await preparedTree(repo.root, "s1");
  assert.match(first, /\*\.swp/);
  assert.ok(asked);
  const remembered = excludesFileCounts.remembered;
  for (const session of ["s2", "s3"]) {
    assert.deepEqual(await preparedTree(repo.root, session), [first, false]);
  }
  assert.equal(excludesFileCounts.remembered, remembered + 2);
});

Deno.test("the remembered excludes file gives way to every change git would see: a new value at the same size and time, the main checkout's config.worktree, an include", async () => {
  await using repo = await tempRepo();
  const dir = join(repo.root, ".git");
  for (const [name, text] of [["ign-a", "*.aaa\n"], ["ign-b", "*.bbb\n"], ["ign-c", "*.ccc\n"]]) {
    await Deno.writeTextFile(join(dir, name), text);
  }
  await repo.git(["config", "extensions.worktreeConfig", "true"]);
  await repo.git(["config", "core.excludesFile", join(dir, "ign-a")]);
  await waitOutRacyWindow();
  assert.match((await preparedTree(repo.root, "s1"))[0], /\*\.aaa/);
  assert.equal((await preparedTree(repo.root, "s2"))[1], false);

  // Same size, modification time put back: only the bytes and the change time tell.
  const config = join(dir, "config");
  const before = await Deno.stat(config);
  await Deno.writeTextFile(config, (await Deno.readTextFile(config)).replace("ign-a", "ign-b"));
  await Deno.utime(config, before.atime!, before.mtime!);
  assert.equal((await Deno.stat(config)).size, before.size);
  const [second, asked] = await preparedTree(repo.root, "s3");
  assert.ok(asked);
  assert.match(second, /\*\.bbb/);
  assert.doesNotMatch(second, /\*\.aaa/);

  // The main checkout's own config.worktree (read with GIT_DIR at the repository) overrides it.
  await Deno.writeTextFile(
    join(dir, "config.worktree"),
    `[core]\n\texcludesFile = ${join(dir, "ign-c")}\n`,
  );
  assert.match((await preparedTree(repo.root, "s4"))[0], /\*\.ccc/);

  // An include names a file that is not looked at: git is asked every time, however old.
  await Deno.remove(join(dir, "config.worktree"));
  const included = join(dir, "included.gitconfig");
  await Deno.writeTextFile(included, "");
  await repo.git(["config", "include.path", included]);
  await waitOutRacyWindow();
  assert.equal((await preparedTree(repo.root, "s5"))[1], true);
  await Deno.writeTextFile(included, `[core]\n\texcludesFile = ${join(dir, "ign-a")}\n`);
  const [included1, asked1] = await preparedTree(repo.root, "s6");
  assert.ok(asked1);
  assert.match(included1, /\*\.aaa/);
});

Deno.test("exactIgnoreLine() matches exactly the path: glob characters, a leading ! or #, a trailing space", async () => {
  const names = [".env", "config/a[1]*.json", "!x", "#y", "z ", "q?.txt"];
  await using repo = await tempRepo({ "README.md": "hi\n" });
  for (const name of [...names, "config/a1b.json", "qq.txt"]) await repo.write(name, "x\n");
  await Deno.writeTextFile(
    join(repo.root, ".git/info/exclude"),
    names.map(exactIgnoreLine).join("\n"),
  );
  const left = await repo.git(["ls-files", "-z", "--others", "--exclude-standard"]);
  assert.deepEqual(left.split("\0").filter((p) => p !== "").sort(), ["config/a1b.json", "qq.txt"]);
  assert.equal(exactIgnoreLine("config/a[1]*.json"), "/config/a\\[1\\]\\*.json");
});

Deno.test("writeWorktreeIgnores() in worktrees that start at the same moment: every one gets its ignores (one writer of .git/config at a time)", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  // Each made and given its ignores while the others are being made (as agents start).
  const files = await Promise.all(
    Array.from({ length: 8 }, async (_, i) => {
      const tree = await createWorktree(repo.root, `race-${i}`, base);
      return await writeWorktreeIgnores(tree.path, [".venv/"]);
    }),
  );
  assert.equal(files.filter(Boolean).length, 8);
  assert.equal(
    await repo.git(["config", "--get", "extensions.worktreeConfig"]),
    "true",
  );
});
