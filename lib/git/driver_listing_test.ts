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

/** Another agent's tree of `repo`, pinned like {@link pinnedTree}'s, sharing its home. */
async function anotherTree(repo: TestRepo, session: string, home: string) {
  const worktree = join(repo.root, ".sdd", "worktrees", session);
  await repo.git(["worktree", "add", "-q", "-b", `agent/${session}`, worktree, "main"]);
  return {
    worktree,
    env: {
      GIT_DIR: join(repo.root, ".git", "worktrees", session),
      GIT_COMMON_DIR: join(repo.root, ".git"),
      GIT_WORK_TREE: worktree,
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
    },
  };
}

Deno.test("listDriverKeys() answers a new tree of the repository from memory while its own files name no driver and the files the trees share stand — and asks git for a tree whose own file names one, holds an include or is not a file", async () => {
  await using repo = await tempRepo();
  const { worktree, env } = await pinnedTree(repo);
  await repo.git(["config", "extensions.worktreeConfig", "true"]);
  await repo.git(["config", "filter.shared.clean", "cat"]);
  // The service's own config.worktree in each tree: names its exclude file, no driver.
  const serviceFile = (dir: string) =>
    Deno.writeTextFile(join(dir, "config.worktree"), `[core]\n\texcludesFile = ${dir}/x\n`);
  await serviceFile(env.GIT_DIR);
  await waitOutRacyWindow();
  assert.deepEqual(await ask(worktree, env), [["filter.shared.clean"], true]);

  // A new tree whose own file is just written (within the racy window) and names no driver.
  const b = await anotherTree(repo, "s-2", env.HOME);
  await serviceFile(b.env.GIT_DIR);
  assert.deepEqual(await ask(b.worktree, b.env), [["filter.shared.clean"], false]);
  // A tree with no file of its own at all.
  const c = await anotherTree(repo, "s-3", env.HOME);
  assert.deepEqual(await ask(c.worktree, c.env), [["filter.shared.clean"], false]);

  // Its own file names a driver: asked, and the driver is in the answer.
  const d = await anotherTree(repo, "s-4", env.HOME);
  await Deno.writeTextFile(join(d.env.GIT_DIR, "config.worktree"), '[MERGE "m"]\n\tdriver = x\n');
  const [keys, asked] = await ask(d.worktree, d.env);
  assert.ok(asked);
  assert.deepEqual(keys.sort(), ["filter.shared.clean", "merge.m.driver"]);
  // An include (of a file naming a driver): asked.
  const e = await anotherTree(repo, "s-5", env.HOME);
  const included = join(repo.root, ".sdd", "inc.gitconfig");
  await Deno.writeTextFile(included, '[filter "inc"]\n\tsmudge = x\n');
  await Deno.writeTextFile(
    join(e.env.GIT_DIR, "config.worktree"),
    `[include]\n\tpath = ${included}\n`,
  );
  const [incKeys, incAsked] = await ask(e.worktree, e.env);
  assert.ok(incAsked);
  assert.deepEqual(incKeys.sort(), ["filter.inc.smudge", "filter.shared.clean"]);
  // Not a file (a directory where the file would be): asked.
  const f = await anotherTree(repo, "s-6", env.HOME);
  await Deno.mkdir(join(f.env.GIT_DIR, "config.worktree"));
  assert.equal((await ask(f.worktree, f.env).catch(() => [[], true] as const))[1], true);

  // A shared file changed (the repository's own config): the next new tree is asked.
  await repo.git(["config", "merge.late.driver", "true"]);
  const g = await anotherTree(repo, "s-7", env.HOME);
  const [late, lateAsked] = await ask(g.worktree, g.env);
  assert.ok(lateAsked);
  assert.deepEqual(late.sort(), ["filter.shared.clean", "merge.late.driver"]);
});
