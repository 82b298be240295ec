/**
 * Removing an agent's worktree as `git worktree remove --force` removes it, without a git process
 * (issue 32: one a task, at its reap) — the dual of lib/worktrees/one_process_add.ts, which makes
 * it the same way. git's removal, for an unlocked linked worktree, is: the work tree's directory
 * removed whole, then its git directory (`<common>/worktrees/<id>`), then `<common>/worktrees`
 * when that is left empty; nothing of it is read or run (with `--force` no `git status` runs
 * there). Here the same, in that order (the entry's `gitdir` first, so that a kill in between
 * leaves what a kill during git's removal can leave, which the next run prunes), with the directories of the worktree's sealed record
 * (lib/worktrees/trees.ts: never what files in the tree say), in this process's queue of
 * worktree commands (lib/git/worktree_admin.ts); links are removed, never followed.
 *
 * Anything that is not that plain case is left to `git worktree remove --force`, with its refusals
 * and messages: a `locked` worktree (git refuses it), directories that are not the ones the
 * service makes (`<root>/.sdd/worktrees/<id>` and `<common>/worktrees/<id>`), a git directory
 * whose `gitdir` does not name the tree's `.git` or a tree whose `.git` file does not name it
 * back (git's own validation), and any failure of the removal itself.
 */
import { basename, dirname, join } from "node:path";
import { serialised } from "../async/serialised.ts";
import type { TreeDirs } from "../git/agent_tree.ts";
import { gitWorktree, worktreeLockKey } from "../git/worktree_admin.ts";
import { plainFileText } from "../git/plain_file.ts";
import { workspacePaths } from "../workspace.ts";
import { crashPoint } from "../util/crash_points.ts";

/** How many worktrees were removed here and how many by `git worktree remove` (tests, benchmarks). */
export const treeRemovalCounts = { inProcess: 0, byGit: 0 };

/** Why the plain case does not hold (undefined when it does). */
async function notPlain(root: string, dirs: TreeDirs): Promise<string | undefined> {
  const { worktree, admin_dir: admin, common_dir: common } = dirs;
  const realRoot = await Deno.realPath(root).catch(() => root);
  if (dirname(worktree) !== workspacePaths(realRoot).worktrees) return "not a service worktree";
  if (dirname(admin) !== join(common, "worktrees") || !basename(admin)) {
    return "not a linked worktree's git directory";
  }
  const locked = await Deno.lstat(join(admin, "locked")).then(() => true, () => false);
  if (locked) return "locked";
  const gitdir = plainFileText(join(admin, "gitdir"), 4096);
  if (gitdir?.replace(/\n$/, "") !== join(worktree, ".git")) return "its gitdir names another tree";
  // As git validates a worktree before removing it: the tree is a directory whose `.git` file
  // names this git directory (a teardown ran there since the record was checked).
  const st = await Deno.lstat(worktree).catch(() => undefined);
  if (!st?.isDirectory || st.isSymlink) return "not a directory";
  const named = plainFileText(join(worktree, ".git"), 4096);
  if (named?.replace(/\n$/, "") !== `gitdir: ${admin}`) return "its .git file names another";
  return undefined;
}

/**
 * Remove the worktree at `dirs` (its sealed record's directories) of the repository at `root`,
 * as `git worktree remove --force <worktree>` does; that command itself when the case is not
 * plain or the removal fails. Throws what git says when git cannot remove it either.
 */
export async function removeWorktree(
  root: string,
  dirs: TreeDirs,
  signal?: AbortSignal,
): Promise<void> {
  const removed = await serialised(worktreeLockKey(root), async () => {
    if (await notPlain(root, dirs)) return false;
    // The entry's `gitdir` first: a kill after it leaves an entry the next run prunes (once the
    // commit its HEAD names is held: lib/worktrees/settle.ts), or, with the tree still there, one
    // that opening the tree puts back.
    const gitdir = join(dirs.admin_dir, "gitdir");
    const named = plainFileText(gitdir, 4096)!;
    try {
      await Deno.remove(gitdir);
    } catch {
      return false;
    }
    try {
      await Deno.remove(dirs.worktree, { recursive: true });
    } catch {
      await Deno.writeTextFile(gitdir, named).catch(() => {}); // as it was, for git
      return false; // what is left goes as git removes it
    }
    await crashPoint("reap.tree_removed");
    try {
      await Deno.remove(dirs.admin_dir, { recursive: true });
    } catch {
      return false;
    }
    // As git does: the directory of linked worktrees goes once it is empty (kept otherwise).
    await Deno.remove(dirname(dirs.admin_dir)).catch(() => {});
    return true;
  });
  if (removed) {
    treeRemovalCounts.inProcess++;
    return;
  }
  treeRemovalCounts.byGit++;
  await gitWorktree(root, ["remove", "--force", dirs.worktree], { signal });
}
