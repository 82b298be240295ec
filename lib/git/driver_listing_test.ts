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
async function ask(
  cwd: string,
  env: Record<string, string>,
  racyMs?: number,
): Promise<[string[], boolean]> {
  const asked = driverListingCounts.asked;
  const keys = await listDriverKeys(cwd, { env, racyMs });
  return [keys, driverListingCounts.asked > asked];
}

/** Past the widest window (a file system of whole seconds): the files are old from here on. */
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

  // A file changed within the window is kept when it names neither filters nor merges: whatever
  // git read there, it defined no driver the answer could lack.
  await waitOutRacyWindow(); // the repository's file (which names a filter) is old again
  await Deno.writeTextFile(join(env.GIT_DIR, "config.worktree"), "[core]\n\tbare = false\n");
  assert.deepEqual(await ask(worktree, env), [["filter.bbbb.clean"], true]);
  assert.deepEqual(await ask(worktree, env), [["filter.bbbb.clean"], false]);
  await Deno.writeTextFile(join(env.GIT_DIR, "config.worktree"), '[filter "z"]\n\tclean = x\n');
  const [later] = await ask(worktree, env);
  assert.deepEqual(later.sort(), ["filter.bbbb.clean", "filter.z.clean"]);
});

Deno.test("listDriverKeys() keeps no answer while a file changed within the racy window, holds an include, or git names another source", async () => {
  await using repo = await tempRepo();
  const { worktree, env, global } = await pinnedTree(repo);
  // Changed within the window (a minute, so that a slow machine cannot outwait it): a write
  // during git's read could leave the same change time, so git is asked again.
  await repo.git(["config", "filter.f.smudge", "cat"]);
  assert.deepEqual(await ask(worktree, env, 60_000), [["filter.f.smudge"], true]);
  assert.deepEqual(await ask(worktree, env, 60_000), [["filter.f.smudge"], true]);

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

Deno.test("listDriverKeys() in a checkout's top directory looks at the repository's own files, and keeps nothing once a commondir could move them", async () => {
  await using repo = await tempRepo();
  const home = join(repo.root, ".sdd", "home");
  await Deno.mkdir(home, { recursive: true });
  const env = { HOME: home, XDG_CONFIG_HOME: join(home, ".config") };
  await repo.git(["config", "merge.x.driver", "true"]);
  await waitOutRacyWindow();
  assert.deepEqual(await ask(repo.root, env), [["merge.x.driver"], true]);
  assert.deepEqual(await ask(repo.root, env), [["merge.x.driver"], false]);
  await repo.git(["config", "filter.y.process", "true"]);
  assert.deepEqual(await ask(repo.root, env), [["merge.x.driver", "filter.y.process"], true]);

  await Deno.writeTextFile(join(repo.root, ".git", "commondir"), ".\n");
  await waitOutRacyWindow();
  assert.deepEqual(await ask(repo.root, env), [["merge.x.driver", "filter.y.process"], true]);
  assert.deepEqual(await ask(repo.root, env), [["merge.x.driver", "filter.y.process"], true]);
  // Anywhere else (a subdirectory: git's discovery walks up), git is always asked.
  await Deno.mkdir(join(repo.root, "sub"));
  await Deno.remove(join(repo.root, ".git", "commondir"));
  assert.deepEqual((await ask(join(repo.root, "sub"), env))[1], true);
  assert.deepEqual((await ask(join(repo.root, "sub"), env))[1], true);
});
