import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo, type TestRepo } from "../git/_test_repo.ts";
import { cleanHead, commitPartialWork, createWorktree, WorktreeError } from "./worktrees.ts";

Deno.test("createWorktree() cuts agent/<session> from the base commit under .sdd/worktrees", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  await repo.write("later.txt", "after the base\n");
  await repo.commitAll("later");
  const wt = await createWorktree(repo.root, "sess-1", base);
  assert.equal(wt.path, join(repo.root, ".sdd/worktrees/sess-1"));
  assert.equal(wt.branch, "agent/sess-1");
  assert.equal(await repo.git(["rev-parse", "HEAD"], wt.path), base);
  assert.equal(await repo.git(["symbolic-ref", "--short", "HEAD"], wt.path), "agent/sess-1");
  assert.equal(await repo.git(["status", "--porcelain"]), "", "user's status stays clean");
  assert.match(await Deno.readTextFile(join(repo.root, ".git/info/exclude")), /^\.sdd\/$/m);
});

Deno.test("createWorktree() prunes stale metadata of a deleted worktree and retries", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  const first = await createWorktree(repo.root, "s1", base);
  await Deno.remove(first.path, { recursive: true }); // crash leftovers: registered, dir gone
  const again = await createWorktree(repo.root, "s1", base);
  assert.ok(again.pruned);
  assert.equal(await repo.git(["rev-parse", "HEAD"], again.path), base);
});

Deno.test("createWorktree() refuses to reuse a leftover branch that holds work", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  const first = await createWorktree(repo.root, "s1", base);
  await repo.write("w.txt", "work\n", first.path);
  await commitPartialWork(first.path, "work");
  await Deno.remove(first.path, { recursive: true });
  await assert.rejects(() => createWorktree(repo.root, "s1", base), (e: unknown) => {
    assert.ok(e instanceof WorktreeError);
    assert.match(e.message, /refs\/service\/rescue\/s1/);
    return true;
  });
});

Deno.test("createWorktree() names the fix when the path is a live worktree", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  await createWorktree(repo.root, "s1", base);
  await repo.git(["branch", "-m", "agent/s1", "agent/renamed"]);
  await assert.rejects(() => createWorktree(repo.root, "s1", base), (e: unknown) => {
    assert.ok(e instanceof WorktreeError);
    assert.match(e.fix, /git worktree prune/);
    assert.match(e.fix, /git worktree remove .*\.sdd\/worktrees\/s1 --force/);
    return true;
  });
});

Deno.test("createWorktree() rejects session ids that could escape .sdd/worktrees", async () => {
  await using repo = await tempRepo();
  for (const bad of ["../x", "a/b", "", "x.lock", ".hidden"]) {
    await assert.rejects(() => createWorktree(repo.root, bad, "main"), RangeError);
  }
});

Deno.test("commitPartialWork() commits leftovers once and reports the tip", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  const clean = await commitPartialWork(wt.path, "nothing");
  assert.deepEqual(clean, { tip: base, committed: false, leftOut: [], rewritten: 0 });
  await repo.write("README.md", "edited\n", wt.path);
  await repo.write("new/file.txt", "new\n", wt.path);
  const work = await commitPartialWork(wt.path, "partial work");
  assert.ok(work.committed);
  assert.notEqual(work.tip, base);
  assert.equal(await repo.git(["rev-parse", "agent/s1"]), work.tip);
  assert.equal(await repo.git(["log", "-1", "--format=%s", work.tip]), "partial work");
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
});

Deno.test("commitPartialWork() is an error naming git commit when staged work cannot be committed, never 'nothing to commit'", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s-1", "main");
  await repo.write("work.txt", "work\n", wt.path);
  const lock = join(repo.root, ".git/refs/heads/agent/s-1.lock"); // another writer holds the branch
  await Deno.writeTextFile(lock, "");
  await assert.rejects(
    () => commitPartialWork(wt.path, "w", { root: repo.root }),
    /git commit -q --no-verify -m w .*exited with 128: .*s-1\.lock/s,
  );
  await Deno.remove(lock);
  const work = await commitPartialWork(wt.path, "w", { root: repo.root });
  assert.equal(work.committed, true);
  assert.equal(await repo.git(["show", "agent/s-1:work.txt"]), "work");
});

Deno.test("commitPartialWork() reports the tip git reports: a loose branch, a packed one, a detached HEAD", async () => {
  const cases: { name: string; before: (repo: TestRepo, wt: string) => Promise<void> }[] = [
    { name: "loose branch", before: async () => {} },
    { name: "packed branch", before: async (repo) => void await repo.git(["pack-refs", "--all"]) },
    {
      name: "detached HEAD",
      before: async (repo, wt) => void await repo.git(["checkout", "-q", "--detach"], wt),
    },
  ];
  for (const c of cases) {
    await using repo = await tempRepo();
    const wt = await createWorktree(repo.root, "s-1", "main");
    await c.before(repo, wt.path);
    for (const work of [undefined, "work\n"]) { // nothing to commit, then something
      if (work) await repo.write("work.txt", work, wt.path);
      const { tip } = await commitPartialWork(wt.path, "w", { root: repo.root });
      assert.equal(tip, await repo.git(["rev-parse", "HEAD"], wt.path), `${c.name}, ${work}`);
    }
  }
});

Deno.test("cleanHead() names the commit only when git add -A would take nothing", async () => {
  await using repo = await tempRepo({ "README.md": "hello\n", ".gitignore": "*.log\n" });
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  assert.equal(await cleanHead(wt.path), base);
  await repo.write("build.log", "ignored\n", wt.path);
  assert.equal(await cleanHead(wt.path), base, "an ignored file is never committed");
  await repo.write("new/file.txt", "new\n", wt.path);
  assert.equal(await cleanHead(wt.path), undefined, "an untracked file");
  await repo.git(["add", "-A"], wt.path);
  assert.equal(await cleanHead(wt.path), undefined, "a staged change");
  await repo.git(["commit", "-qm", "w"], wt.path);
  await repo.write("README.md", "edited\n", wt.path);
  assert.equal(await cleanHead(wt.path), undefined, "an unstaged change");
});
