/**
 * The one way the service runs git in an agent's tree (its worktree, a gate's tree): the
 * directories are the service's, never what files there say — `GIT_DIR` (the worktree's own git
 * directory), `GIT_COMMON_DIR` (the repository's) and `GIT_WORK_TREE` are set, so git reads no
 * `.git` file and no `core.worktree`, and the `commondir` file, which git's ref store still reads,
 * must name the repository's — and every call carries lib/git/hardened.ts:
 * no hook, no fsmonitor, no transport, no filter or merge driver whatever the configuration or
 * the tree's attributes say, and diffs with `--no-textconv --no-ext-diff`. git's own
 * `safe.directory` check is skipped when `GIT_DIR` is set, so the same rule is applied here: the
 * three directories must belong to the service's user.
 */
import { join, resolve } from "node:path";
import { git, GitError, type GitOptions, type GitResult } from "./git.ts";
import {
  AGENT_TREE_CONFIG,
  diffSafeArgs,
  driverOverrides,
  type HardenedValue,
} from "./hardened.ts";
import { listDriverKeys } from "./driver_listing.ts";
import { plainFileText } from "./plain_file.ts";

/** Where an agent's tree and its git directories are, as the service made them. */
export interface TreeDirs {
  /** The work tree. */
  worktree: string;
  /** Its own git directory (`<common>/worktrees/<name>`). */
  admin_dir: string;
  /** The repository's git directory. */
  common_dir: string;
}

/** Options of one call in an agent's tree (its directory is the tree's). */
export type TreeCallOptions = Omit<GitOptions, "cwd" | "config">;

/** git, hardened, in one agent's tree. */
export interface AgentTree {
  readonly dirs: TreeDirs;
  /** Run `git <args>` in the tree. */
  git(args: readonly string[], options?: TreeCallOptions): Promise<GitResult>;
  /** The same, its standard output without the trailing newline. */
  text(args: readonly string[], options?: TreeCallOptions): Promise<string>;
}

/** The service will not run git in a tree another user owns. */
export class ForeignTreeError extends Error {
  constructor(readonly path: string, readonly owner: number, readonly expected: number) {
    super(
      `${path} belongs to uid ${owner}, not to the service's user (${expected}): the service ` +
        "runs no git there (git's safe.directory rule). Give it back with chown, or run " +
        "`service run` once: it gives back what a container's user kept",
    );
    this.name = "ForeignTreeError";
  }
}

/** Throw unless each of `paths` is a directory of the service's user (not a link). */
function requireOwned(paths: readonly string[]): void {
  const uid = Deno.uid();
  for (const path of paths) {
    const st = Deno.lstatSync(path); // in place: metadata in the cache, microseconds
    if (st.isSymlink || !st.isDirectory) {
      throw new GitError(["(open)"], path, 128, `${path} is not a directory (a link or a file)`);
    }
    if (uid !== null && st.uid !== null && st.uid !== uid) {
      throw new ForeignTreeError(path, st.uid, uid);
    }
  }
}

/**
 * lib/git/hardened.ts's configuration for git run in `cwd` (with `options.env`): the agent-tree
 * values and every filter and merge driver the configuration git reads there defines, switched
 * off. For a checkout the service writes agents' work into (the target branch's).
 */
export async function hardenedConfig(
  cwd: string,
  options: { env?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<HardenedValue[]> {
  return [...AGENT_TREE_CONFIG, ...driverOverrides(await listDriverKeys(cwd, options))];
}

/**
 * Throw unless the tree's git directory names the repository's as its `commondir` (a plain file).
 * `GIT_COMMON_DIR` does not cover it: git's ref store (2.39, files backend) reads that file
 * itself, so a `commondir` naming another git directory would take the branch's updates there.
 */
function requireCommonDir(dirs: TreeDirs): void {
  const path = join(dirs.admin_dir, "commondir");
  const text = plainFileText(path, 4096) ?? "";
  const named = text.trim() && resolve(dirs.admin_dir, text.trim());
  const real = (p: string) => {
    try {
      return Deno.realPathSync(p);
    } catch {
      return p;
    }
  };
  if (!named || real(named) !== real(dirs.common_dir)) {
    throw new GitError(
      ["(open)"],
      dirs.worktree,
      128,
      `${path} does not name ${dirs.common_dir}: put the worktree's git files back first ` +
        "(lib/git/tree_admin.ts restoreTreeAdmin)",
    );
  }
}

/** Options of {@link openAgentTree}. */
export interface OpenTreeOptions {
  signal?: AbortSignal;
}

/**
 * A hardened git for the tree at `dirs`. The filter and merge drivers the configuration defines
 * are listed right before each call, read the way that call reads configuration, and each is
 * switched off.
 */
export async function openAgentTree(
  dirs: TreeDirs,
  options: OpenTreeOptions = {},
): Promise<AgentTree> {
  requireOwned([dirs.worktree, dirs.admin_dir, dirs.common_dir]);
  requireCommonDir(dirs);
  const pinned = {
    GIT_DIR: dirs.admin_dir,
    GIT_COMMON_DIR: dirs.common_dir,
    GIT_WORK_TREE: dirs.worktree,
  };
  // Asked once here so a configuration git cannot read fails the open, then again before each
  // call: a host-process agent of another task can add a driver to the shared configuration at
  // any moment (answered from memory while nothing changed).
  await hardenedConfig(dirs.worktree, { env: pinned, signal: options.signal });
  const run = (args: readonly string[], o: TreeCallOptions = {}) =>
    git(diffSafeArgs(args), {
      ...o,
      cwd: dirs.worktree,
      env: { ...o.env, ...pinned },
      config: () => hardenedConfig(dirs.worktree, { env: pinned, signal: o.signal }),
    });
  return {
    dirs,
    git: run,
    text: async (args, o) => (await run(args, o)).stdout.replace(/\n$/, ""),
  };
}
