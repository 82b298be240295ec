import assert from "node:assert/strict";
import { join } from "node:path";
import { checkTreeAdmin, recordTreeAdmin, restoreTreeAdmin, type TreeAdmin } from "./tree_admin.ts";
import { tempRepo, type TestRepo } from "./_test_repo.ts";
import { openAgentTree } from "./agent_tree.ts";

const HOSTILE = new URL("../../tests/_hostile_git.ts", import.meta.url).pathname;

/** A repository, a worktree on `agent/s-1` with per-worktree files, and its record. */
async function recorded(repo: TestRepo): Promise<{ a: TreeAdmin; victim: string }> {
  const wt = join(repo.root, ".sdd", "worktrees", "s-1");
  await repo.git(["worktree", "add", "-q", "-b", "agent/s-1", wt, "main"]);
  await repo.git(["config", "extensions.worktreeConfig", "true"]);
  const admin = join(repo.root, ".git", "worktrees", "s-1");
  await Deno.writeTextFile(join(admin, "service-exclude"), "/.env\n");
  await repo.git(["config", "--worktree", "core.excludesFile", join(admin, "service-exclude")], wt);
  const victim = join(repo.root, "..", `victim-${crypto.randomUUID()}`);
  await Deno.writeTextFile(victim, "a host file\n");
  return { a: await recordTreeAdmin(wt, join(repo.root, ".git")), victim };
}

/** `[what an agent did to its worktree's git files, the problem checkTreeAdmin names]`. */
const TAMPERED: [string, (a: TreeAdmin, victim: string) => Promise<void>, RegExp][] = [
  ["commondir names a git directory of its own", async (a) => {
    await Deno.mkdir(join(a.worktree, ".fake"));
    await Deno.writeTextFile(join(a.admin_dir, "commondir"), join(a.worktree, ".fake") + "\n");
  }, /commondir changed/],
  ["gitdir names another place", async (a) => {
    await Deno.writeTextFile(join(a.admin_dir, "gitdir"), "/tmp/decoy/.git\n");
  }, /gitdir changed/],
  ["HEAD is a link to the target branch's ref file", async (a) => {
    await Deno.remove(join(a.admin_dir, "HEAD"));
    await Deno.symlink(join(a.common_dir, "refs", "heads", "main"), join(a.admin_dir, "HEAD"));
  }, /HEAD changed/],
  ["HEAD is on the target branch", async (a) => {
    await Deno.writeTextFile(join(a.admin_dir, "HEAD"), "ref: refs/heads/main\n");
  }, /HEAD changed/],
  ["the HEAD reflog is a link to a host file", async (a, victim) => {
    await Deno.remove(join(a.admin_dir, "logs", "HEAD")).catch(() => {});
    await Deno.mkdir(join(a.admin_dir, "logs"), { recursive: true });
    await Deno.symlink(victim, join(a.admin_dir, "logs", "HEAD"));
  }, /logs holds more/],
  ["the index is a link to a host file", async (a, victim) => {
    await Deno.remove(join(a.admin_dir, "index"));
    await Deno.symlink(victim, join(a.admin_dir, "index"));
  }, /index is not a plain file/],
  ["COMMIT_EDITMSG (which git writes through) is a link to a host file", async (a, victim) => {
    await Deno.symlink(victim, join(a.admin_dir, "COMMIT_EDITMSG"));
  }, /COMMIT_EDITMSG is not a plain file/],
  ["ORIG_HEAD is a hard link to a host file", async (a, victim) => {
    await Deno.remove(join(a.admin_dir, "ORIG_HEAD")).catch(() => {});
    await Deno.link(victim, join(a.admin_dir, "ORIG_HEAD"));
  }, /ORIG_HEAD is not a plain file/],
  ["the worktree is locked (worktree remove would refuse)", async (a) => {
    await Deno.writeTextFile(join(a.admin_dir, "locked"), "mine\n");
  }, /locked is not written by git or the service/],
  ["per-worktree refs of its own", async (a) => {
    await Deno.mkdir(join(a.admin_dir, "refs", "bisect"), { recursive: true });
    await Deno.writeTextFile(join(a.admin_dir, "refs", "bisect", "bad"), "x\n");
  }, /refs is not written/],
  ["config.worktree with an fsmonitor and a hooks path", async (a) => {
    await Deno.writeTextFile(
      join(a.admin_dir, "config.worktree"),
      "[core]\n\tfsmonitor = /tmp/x\n\thooksPath = /tmp/h\n",
    );
  }, /config\.worktree changed/],
  ["its excludes emptied (copied .env files would be staged)", async (a) => {
    await Deno.writeTextFile(join(a.admin_dir, "service-exclude"), "");
  }, /service-exclude changed/],
  ["the worktree's .git file names another git directory", async (a) => {
    await Deno.writeTextFile(join(a.worktree, ".git"), "gitdir: /tmp/elsewhere\n");
  }, /\.git file changed/],
  ["its git directory replaced by a link to a copy", async (a) => {
    const copy = `${a.admin_dir}-copy`;
    await Deno.rename(a.admin_dir, copy);
    await Deno.symlink(copy, a.admin_dir);
  }, /git directory is not a directory/],
];

for (const [name, plant, problem] of TAMPERED) {
  Deno.test(`checkTreeAdmin() and restoreTreeAdmin(): ${name}`, async () => {
    await using repo = await tempRepo();
    const { a, victim } = await recorded(repo);
    const main = await Deno.readTextFile(join(a.common_dir, "refs", "heads", "main"));
    try {
      assert.deepEqual(await checkTreeAdmin(a), [], "as recorded");
      await plant(a, victim);
      assert.match((await checkTreeAdmin(a)).join("; "), problem);
      await restoreTreeAdmin(a);
      assert.deepEqual(await checkTreeAdmin(a), [], "put back");
      assert.equal(await Deno.readTextFile(victim), "a host file\n", "nothing written through");
      assert.equal(await Deno.readTextFile(join(a.common_dir, "refs", "heads", "main")), main);
      // The host's git works there again, on the agent branch, and writes only its own files.
      const tree = await openAgentTree(a);
      await repo.write("work.txt", "work\n", a.worktree);
      await tree.git(["add", "-A"]);
      await tree.git(["commit", "-q", "--no-verify", "-m", "work"]);
      assert.equal(await tree.text(["symbolic-ref", "HEAD"]), "refs/heads/agent/s-1");
      assert.equal(await Deno.readTextFile(victim), "a host file\n");
    } finally {
      await Deno.remove(victim).catch(() => {});
      await Deno.remove(`${a.admin_dir}-copy`, { recursive: true }).catch(() => {});
    }
  });
}

Deno.test("restoreTreeAdmin() rebuilds the index from the branch: an entry outside the worktree is gone", async () => {
  await using repo = await tempRepo();
  const { a, victim } = await recorded(repo);
  try {
    // A crafted index names the victim from the worktree with ../ (git's own update-index
    // refuses such a path; an agent writes the bytes itself, as tests/_hostile_git.ts does).
    const trick = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", HOSTILE, "index", JSON.stringify({ sentinel: "/nonexistent", victim })],
      cwd: a.worktree,
      stdout: "null",
      stderr: "piped",
    }).output();
    assert.ok(trick.success, new TextDecoder().decode(trick.stderr));
    const tree = await openAgentTree(a);
    assert.match(await tree.text(["ls-files"]), /\.\.\/victim-/, "the index names the host file");
    assert.deepEqual(await checkTreeAdmin(a), [], "which no check of the files sees");
    await restoreTreeAdmin(a);
    assert.deepEqual(
      (await tree.text(["ls-files"])).split("\n"),
      (await tree.text(["ls-tree", "-r", "--name-only", "HEAD"])).split("\n"),
    );
    assert.equal(await tree.text(["status", "--porcelain"]), "", "the worktree is clean again");
  } finally {
    await Deno.remove(victim).catch(() => {});
  }
});

Deno.test("recordTreeAdmin() refuses a worktree whose git directory is not in the repository's", async () => {
  await using repo = await tempRepo();
  const { a } = await recorded(repo);
  await Deno.writeTextFile(join(a.worktree, ".git"), "gitdir: /tmp/not-here\n");
  await assert.rejects(() => recordTreeAdmin(a.worktree, a.common_dir), /not in/);
});
