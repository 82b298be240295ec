/**
 * Per-worktree ignores (DESIGN.md §13): build caches, the linked directories and the copied files
 * are never staged in an agent's worktree, and nothing of the user's changes — no tracked file,
 * no `.gitignore`, not the common `info/exclude` their checkout reads.
 *
 * Git reads only the common `info/exclude` for linked worktrees, so the lines go to a file in
 * the worktree's own git directory (`.git/worktrees/<id>/service-exclude`, removed with the
 * worktree), named by a per-worktree `core.excludesFile` (`extensions.worktreeConfig`): every
 * git command run in the worktree — the service's and the agent's own `git add -A` — honours it.
 * That setting replaces the user's global excludes file there, so its lines are copied in too.
 *
 * Ignores keep new junk out; a file the repository already tracks stays tracked. What an agent
 * forced in anyway (`git add -f`, its own commits) is kept out of every commit of its branch by
 * lib/worktrees/keep_out.ts before its diff is captured, so it is never diffed, merged or in the
 * history a merge lands.
 */
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { gitAmongWorktrees } from "../git/worktree_admin.ts";
import { askConfig } from "../git/remembered_config.ts";
import { treeRecordOf } from "./trees.ts";
import { serviceWorktreeConfig, WORKTREE_EXCLUDE_FILE } from "./worktree_config.ts";

/** Build caches that never belong in a commit (DESIGN.md §13 `default_ignores`). */
export const DEFAULT_IGNORES: readonly string[] = [
  "__pycache__/",
  "*.pyc",
  ".pytest_cache/",
  ".mypy_cache/",
  ".ruff_cache/",
  ".tox/",
  "*.egg-info/",
  ".coverage",
  "coverage/",
  ".DS_Store",
];

const HEADER = "# Written by the service for this agent worktree only (DESIGN.md §13).";
const GLOBAL_HEADER = "# The user's global excludes, which core.excludesFile replaces here:";

/** A path as one gitignore line that matches exactly it, from the worktree root. */
export function exactIgnoreLine(path: string): string {
  // The leading `/` anchors it and keeps a first `#` or `!` literal; a trailing space is kept.
  return "/" + path.replace(/[\\*?[\]]/g, (c) => `\\${c}`).replace(/ $/, "\\ ");
}

const enabled = new Set<string>();

/**
 * Turn on `extensions.worktreeConfig` in the repository's config (once per repository). Worktrees
 * start side by side: the check-and-set runs as the repository's only worktree-reading git
 * command (lib/git/worktree_admin.ts), and a lock another process holds is waited out briefly.
 * `common` is the repository's git directory; returns its main checkout.
 */
async function enableWorktreeConfig(
  worktree: string,
  common: string,
  signal?: AbortSignal,
): Promise<string> {
  const root = dirname(common);
  if (enabled.has(root)) return root;
  const o = { cwd: worktree, signal, allowFailure: true };
  const now = await gitAmongWorktrees(root, ["config", "--get", "extensions.worktreeConfig"], o);
  if (now.stdout.trim() !== "true") {
    await gitAmongWorktrees(root, ["config", "extensions.worktreeConfig", "true"], {
      cwd: worktree,
      signal,
    });
  }
  enabled.add(root);
  return root;
}

/** How many `core.excludesFile` look-ups were asked of git and answered from memory. */
export const excludesFileCounts = { asked: 0, remembered: 0 };

/** The question of {@link userGlobalExcludes} (lib/git/remembered_config.ts). */
const EXCLUDES_FILE = {
  args: ["--get", "core.excludesFile"],
  mentions: /excludesfile/i,
  counts: excludesFileCounts,
};

/**
 * The lines of the excludes file git reads for the user outside agent worktrees ("" when none):
 * `core.excludesFile` as the repository's own config, the global and the system one set it —
 * from memory while those files stand as they were (lib/git/remembered_config.ts).
 */
async function userGlobalExcludes(worktree: string, common: string): Promise<string> {
  // The repository's git directory pinned (as common directory too: its own), asked from there:
  // one answer for every worktree of the repository.
  const pinned = common.startsWith("/");
  const set = await askConfig(pinned ? common : worktree, EXCLUDES_FILE, {
    env: pinned ? { GIT_DIR: common, GIT_COMMON_DIR: common } : { GIT_DIR: common },
  }).catch(() => undefined); // git could not read its configuration: as if nothing were set
  let path = set?.values.at(-1)?.trim() ?? "";
  const home = Deno.env.get("HOME") ?? homedir();
  if (path.startsWith("~/")) path = join(home, path.slice(2));
  if (path === "") {
    const xdg = Deno.env.get("XDG_CONFIG_HOME") || join(home, ".config");
    path = join(xdg, "git", "ignore");
  }
  try {
    return await Deno.readTextFile(path);
  } catch {
    return "";
  }
}

/**
 * Write `lines` (gitignore syntax) to the worktree's own exclude file and point its per-worktree
 * `core.excludesFile` at it. Nothing is written when `lines` is empty. Returns the file's path.
 * Call it on a worktree the service just made, before anything untrusted ran there: its git
 * directories are read from its files (lib/worktrees/trees.ts), and a `config.worktree` that
 * does not exist yet is written directly, with the text `git config --worktree` would write.
 */
export async function writeWorktreeIgnores(
  worktree: string,
  lines: readonly string[],
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (lines.length === 0) return undefined;
  const record = await treeRecordOf(worktree);
  const dirs = { own: record.admin_dir, common: record.common_dir };
  const root = await enableWorktreeConfig(worktree, dirs.common, signal);
  const file = join(dirs.own, WORKTREE_EXCLUDE_FILE);
  const global = await userGlobalExcludes(worktree, dirs.common);
  const text = [HEADER, ...lines, ...(global.trim() ? [GLOBAL_HEADER, global.trimEnd()] : [])]
    .join("\n") + "\n";
  await Deno.writeTextFile(file, text);
  try {
    const config = join(dirs.own, "config.worktree");
    await Deno.writeTextFile(config, serviceWorktreeConfig(dirs.own), { createNew: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    // Settings of its own (a sparse checkout's) are kept: git adds the one line.
    // `config --worktree` reads every worktree's files: one at a time with adds and removes.
    await gitAmongWorktrees(root, ["config", "--worktree", "core.excludesFile", file], {
      cwd: worktree,
      signal,
    });
  }
  return file;
}
