import assert from "node:assert/strict";
import { join } from "node:path";
import { driverListingCounts, listDriverKeys, RACY_MS } from "./driver_listing.ts";
import { tempRepo, type TestRepo } from "./_test_repo.ts";

/** An agent's tree of `repo` with its directories pinned, and a global config of its own. */
async function pinnedTree(repo: TestRepo) {
  const worktree = join(repo.root, ".sdd", "worktrees", "s-1");
  await repo.git(["worktree", "add", "-q", "-b", "agent/s-1", worktree, "main"]);
  const home = join(repo.root, ".sdd", "home");
  await Deno.mkdir(home, { recursive: true });
  const global = join(home, ".gitconfig");
  await Deno.writeTextFile(global, "[user]\n\tname = someone\n");
  const env = {
    GIT_DIR: join(repo.root, ".git", "worktrees", "s-1"),
    GIT_COMMON_DIR: join(repo.root, ".git"),
    GIT_WORK_TREE: worktree,
    HOME: home, // not the machine's global file: another process may write that one
    XDG_CONFIG_HOME: join(home, ".config"),
  };
  return { worktree, env, global, common: join(repo.root, ".git", "config") };
}

/** Ask, and say whether git was asked (true) or the answer came from memory (false). */
async function ask(cwd: string, env: Record<string, string>): Promise<[string[], boolean]> {
  const asked = driverListingCounts.asked;
  const keys = await listDriverKeys(cwd, { env });
  return [keys, driverListingCounts.asked > asked];
}

const waitOutRacyWindow = () => new Promise((r) => setTimeout(r, RACY_MS + 200));

Deno.test("listDriverKeys() answers from memory while the configuration files are unchanged, and sees a driver written later — even at the same size and modification time", async () => {
  await using repo = await tempRepo();
  const { worktree, env, common } = await pinnedTree(repo);
  await repo.git(["config", "filter.aaaa.clean", "cat"]);
  await waitOutRacyWindow(); // only files older than the window are trusted to show a change
  assert.deepEqual(await ask(worktree, env), [["filter.aaaa.clean"], true]);
  assert.deepEqual(await ask(worktree, env), [["filter.aaaa.clean"], false]);

  // Same length, modification time put back: only the bytes and the change time differ.
  const before = await Deno.stat(common);
  const text = await Deno.readTextFile(common);
  await Deno.writeTextFile(common, text.replace('"aaaa"', '"bbbb"'));
  await Deno.utime(common, before.atime!, before.mtime!);
  assert.equal((await Deno.stat(common)).size, before.size);
  assert.deepEqual(await ask(worktree, env), [["filter.bbbb.clean"], true]);

  // A new file git reads (the tree's own config) is noticed too.
  await Deno.writeTextFile(join(env.GIT_DIR, "config.worktree"), '[merge "m"]\n\tdriver = x\n');
  await repo.git(["config", "extensions.worktreeConfig", "true"]);
  const [keys, asked] = await ask(worktree, env);
  assert.ok(asked);
  assert.deepEqual(keys.sort(), ["filter.bbbb.clean", "merge.m.driver"]);
});

Deno.test("listDriverKeys() keeps no answer while a file changed within the racy window, holds an include, or git names another source", async () => {
  await using repo = await tempRepo();
  const { worktree, env, global } = await pinnedTree(repo);
  // Just written: a write during git's read could leave the same change time, so ask again.
  await repo.git(["config", "filter.f.smudge", "cat"]);
  assert.deepEqual(await ask(worktree, env), [["filter.f.smudge"], true]);
  assert.deepEqual(await ask(worktree, env), [["filter.f.smudge"], true]);

  // An include names a file that is not looked at: never kept, however old.
  const included = join(repo.root, ".sdd", "included.gitconfig");
  await Deno.writeTextFile(included, "");
  await Deno.writeTextFile(global, `[include]\n\tpath = ${included}\n`);
  await waitOutRacyWindow();
  assert.deepEqual(await ask(worktree, env), [["filter.f.smudge"], true]);
  await Deno.writeTextFile(included, '[filter "late"]\n\tprocess = x\n');
  const [keys, asked] = await ask(worktree, env);
  assert.ok(asked);
  assert.deepEqual(keys.sort(), ["filter.f.smudge", "filter.late.process"]);
});

Deno.test("listDriverKeys() always asks git outside an agent's tree (the directories are git's to find)", async () => {
  await using repo = await tempRepo();
  await repo.git(["config", "merge.x.driver", "true"]);
  await waitOutRacyWindow();
  assert.deepEqual(await ask(repo.root, {}), [["merge.x.driver"], true]);
  assert.deepEqual(await ask(repo.root, {}), [["merge.x.driver"], true]);
});
