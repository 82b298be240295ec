import assert from "node:assert/strict";
import { join } from "node:path";
import { ForeignTreeError, openAgentTree, type TreeDirs } from "./agent_tree.ts";
import { tempRepo, type TestRepo } from "./_test_repo.ts";
import { restoreTreeAdmin } from "./tree_admin.ts";

const HOSTILE = new URL("../../tests/_hostile_git.ts", import.meta.url).pathname;

/** A worktree on `agent/s-1` (per-worktree config on) and a host directory for traces. */
async function agentTree(repo: TestRepo): Promise<{ dirs: TreeDirs; sentinel: string }> {
  const worktree = join(repo.root, ".sdd", "worktrees", "s-1");
  await repo.git(["worktree", "add", "-q", "-b", "agent/s-1", worktree, "main"]);
  await repo.git(["config", "extensions.worktreeConfig", "true"]);
  const sentinel = await Deno.makeTempDir({ prefix: "sentinel-" });
  return {
    dirs: {
      worktree,
      admin_dir: join(repo.root, ".git", "worktrees", "s-1"),
      common_dir: join(repo.root, ".git"),
    },
    sentinel,
  };
}

/** Play one trick of tests/_hostile_git.ts in the worktree, as a host-process agent would. */
async function play(dirs: TreeDirs, trick: string, sentinel: string): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", HOSTILE, trick, JSON.stringify({ sentinel })],
    cwd: dirs.worktree,
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
}

const ran = (sentinel: string) => Deno.readTextFile(join(sentinel, "ran")).catch(() => "");

Deno.test("openAgentTree(): a config.worktree an agent wrote (fsmonitor, hooksPath, a required filter) and its .gitattributes run nothing", async () => {
  await using repo = await tempRepo();
  const { dirs, sentinel } = await agentTree(repo);
  try {
    await play(dirs, "config-worktree", sentinel);
    await repo.write("work.txt", "work\n", dirs.worktree);
    const tree = await openAgentTree(dirs);
    await tree.git(["status", "--porcelain"]);
    await tree.git(["add", "-A"]);
    await tree.git(["commit", "-q", "--no-verify", "-m", "work"]);
    await tree.git(["diff", "HEAD~1", "HEAD"]);
    await tree.git(["log", "-p", "-1"]);
    assert.equal(await ran(sentinel), "");
    assert.equal(await tree.text(["show", "HEAD:work.txt"]), "work", "the bytes as written");
  } finally {
    await Deno.remove(sentinel, { recursive: true });
  }
});

Deno.test("openAgentTree() refuses a commondir naming the agent's own git directory (git's ref store reads it whatever GIT_COMMON_DIR says); once put back, the commit lands in the repository", async () => {
  await using repo = await tempRepo();
  const { dirs, sentinel } = await agentTree(repo);
  try {
    await play(dirs, "commondir", sentinel);
    await repo.write("work.txt", "work\n", dirs.worktree);
    await assert.rejects(() => openAgentTree(dirs), /does not name/);
    await restoreTreeAdmin({
      ...dirs,
      head: "ref: refs/heads/agent/s-1",
      files: {},
    });
    const tree = await openAgentTree(dirs);
    await tree.git(["add", "-A"]);
    await tree.git(["commit", "-q", "--no-verify", "-m", "work"]);
    assert.equal(await ran(sentinel), "");
    assert.equal(await repo.git(["show", "agent/s-1:work.txt"]), "work");
  } finally {
    await Deno.remove(sentinel, { recursive: true });
  }
});

Deno.test("openAgentTree(): the repository's merge and diff drivers never run on a tree whose attributes pick them; a rebase then conflicts", async () => {
  await using repo = await tempRepo({ "a.txt": "one\n" });
  const { dirs, sentinel } = await agentTree(repo);
  try {
    const mark = (what: string, then: string) => `sh -c 'echo ${what} >> ${sentinel}/ran; ${then}'`;
    await repo.git(["config", "merge.demo.driver", mark("merge", "exit 0")]);
    await repo.git(["config", "diff.demo.textconv", mark("textconv", 'cat "$0"')]);
    await repo.git(["config", "diff.demo.command", mark("command", "exit 0")]);
    await repo.write(".gitattributes", "*.txt merge=demo diff=demo\n");
    await repo.write("a.txt", "main's\n");
    const onto = await repo.commitAll("main changes a");
    await repo.write(".gitattributes", "*.txt merge=demo diff=demo\n", dirs.worktree);
    await repo.write("a.txt", "agent's\n", dirs.worktree);
    const tree = await openAgentTree(dirs);
    await tree.git(["add", "-A"]);
    await tree.git(["commit", "-q", "--no-verify", "-m", "agent changes a"]);
    await tree.git(["diff", "HEAD~1", "HEAD"]);
    const base = await repo.git(["rev-parse", "main~1"]);
    const r = await tree.git(["rebase", "--onto", onto, base], { allowFailure: true });
    assert.notEqual(r.code, 0, "the driver did not resolve the conflict");
    await tree.git(["rebase", "--abort"]);
    assert.equal(await ran(sentinel), "");
  } finally {
    await Deno.remove(sentinel, { recursive: true });
  }
});

Deno.test({
  name: "openAgentTree() runs no git in a tree another user owns (git's safe.directory rule)",
  ignore: Deno.uid() !== 0,
  async fn() {
    await using repo = await tempRepo();
    const { dirs, sentinel } = await agentTree(repo);
    await Deno.remove(sentinel, { recursive: true });
    await Deno.chown(dirs.worktree, 65532, 65532);
    await assert.rejects(() => openAgentTree(dirs), ForeignTreeError);
  },
});

Deno.test("a filter another task's agent adds to the shared configuration after the tree was opened runs in none of its later calls", async () => {
  // Found by hand: three agents ending together, one planting `filter.evil.clean` in the shared
  // `.git/config` while the others' work was captured — the listing made when their trees were
  // opened did not switch off the new driver, and `git add` ran it.
  await using repo = await tempRepo();
  const { dirs, sentinel } = await agentTree(repo);
  const tree = await openAgentTree(dirs);
  const mark = join(sentinel, "ran");
  // The other agent, as a host process: the repository's config and this tree's attributes.
  await repo.git(["config", "filter.evil.clean", `sh -c 'echo clean >> ${mark}; cat'`]);
  await repo.git(["config", "filter.evil.smudge", `sh -c 'echo smudge >> ${mark}; cat'`]);
  await Deno.writeTextFile(join(dirs.worktree, ".gitattributes"), "* filter=evil\n");
  await Deno.writeTextFile(join(dirs.worktree, "work.txt"), "the task's work\n");
  await tree.git(["add", "-A"]);
  await tree.git(["status", "--porcelain"]);
  await tree.git(["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "work"]);
  await tree.git(["checkout", "-q", "HEAD~0", "--", "work.txt"]);
  assert.equal(await ran(sentinel), "", "no filter ran");
  assert.equal(await tree.text(["show", "HEAD:work.txt"]), "the task's work");
});
