/**
 * git commands that read every worktree of a repository: `git worktree add | remove | prune |
 * list` and `git config --worktree`. git keeps each worktree in `.git/worktrees/<name>/`, and a
 * command that runs while another `add` is half-way (its directory made, its `commondir` not yet
 * written) fails with "failed to read .git/worktrees/<name>/commondir". Agents, batch patches and
 * gate trees start side by side, so in this process these commands run one at a time per
 * repository, and one that meets another process's half-made worktree is tried again.
 */
import { resolve } from "node:path";
import { serialised } from "../async/serialised.ts";
import { git, GitError, type GitOptions, type GitResult } from "./git.ts";

/** git's words for a worktree another process is making or removing at this moment. */
const IN_FLUX =
  /failed to read .*\/(commondir|gitdir)|could not lock config file|Unable to create '.*\.lock'/;

/** Tries of a command that met a worktree in flux. */
const TRIES = 5;

/** Options of {@link gitAmongWorktrees}: `cwd` defaults to the repository's root. */
export type AmongWorktreesOptions = Omit<GitOptions, "cwd"> & { cwd?: string };

/**
 * Run `git <args…>` (in `options.cwd`, default `root`) as the only such command of the
 * repository at `root` in this process, tried again while it meets a worktree in flux.
 */
export function gitAmongWorktrees(
  root: string,
  args: readonly string[],
  options: AmongWorktreesOptions = {},
): Promise<GitResult> {
  return serialised(worktreeLockKey(root), () => gitPastFlux(root, args, options));
}

/**
 * The key of this process's queue of worktree-reading commands of the repository at `root`
 * (lib/async/serialised.ts): work that writes a worktree's git files without git joins it.
 */
export function worktreeLockKey(root: string): string {
  return `git-worktrees:${resolve(root)}`;
}

/**
 * `git worktree list <args…>` of the repository at `root`, tried again while it meets a worktree
 * in flux, but not queued behind this process's adds and removes: a listing changes nothing, and
 * git lists beside a half-made worktree (sixty adds side by side and 200 listings meanwhile: no
 * listing failed, while the adds met each other's half-made directories). A merge asks for it,
 * and so no longer waits for every worktree queued to be made first.
 */
export function listWorktrees(
  root: string,
  args: readonly string[],
  options: Omit<GitOptions, "cwd"> = {},
): Promise<GitResult> {
  return gitPastFlux(root, ["worktree", "list", ...args], { ...options, cwd: root });
}

/** Run `git <args…>`, tried again while it meets a worktree in flux. */
async function gitPastFlux(
  root: string,
  args: readonly string[],
  options: AmongWorktreesOptions,
): Promise<GitResult> {
  const cwd = options.cwd ?? root;
  for (let attempt = 1;; attempt++) {
    const result = await git(args, { ...options, cwd, allowFailure: true });
    if (result.code === 0) return result;
    if (attempt < TRIES && IN_FLUX.test(result.stderr)) {
      await new Promise((r) => setTimeout(r, 25 * attempt));
      continue;
    }
    if (options.allowFailure) return result;
    throw new GitError(args, cwd, result.code, result.stderr);
  }
}

/** `git worktree <args…>` in the repository at `root` (see {@link gitAmongWorktrees}). */
export function gitWorktree(
  root: string,
  args: readonly string[],
  options: Omit<GitOptions, "cwd"> = {},
): Promise<GitResult> {
  return gitAmongWorktrees(root, ["worktree", ...args], { ...options, cwd: root });
}
