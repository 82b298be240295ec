/**
 * Advancing the target branch without damaging the user's checkout (DESIGN.md §7).
 *
 * When no worktree has the target branch checked out, the ref moves with a compare-and-swap
 * (`git update-ref <ref> <new> <old>`). When the user has it checked out:
 * 1. every path the merge changes is checked against the checkout: modified, staged, untracked
 *    and even ignored files at those paths (or an untracked file where the merge needs a
 *    directory) make the merge wait — `read-tree` would silently overwrite ignored files;
 * 2. `git read-tree -m -u <old> <new>` (the two-tree "switch" that `git checkout` uses) updates
 *    exactly the paths that differ between the two commits, in index and working tree, and
 *    refuses as a whole, changing nothing, if it would lose anything; unrelated staged and
 *    unstaged changes are carried over untouched;
 * 3. the ref moves with a compare-and-swap; if the user committed in between, the working tree
 *    update is reverted the same way and the merge waits.
 */
import { gitWorktree } from "../git/worktree_admin.ts";
import { isAbsolute, join } from "node:path";
import { git, splitZ } from "../git/git.ts";
import { hardenedConfig } from "../git/agent_tree.ts";
import type { HardenedValue } from "../git/hardened.ts";

/** Outcome of {@link advanceTarget}. */
export type LandResult =
  | { landed: true; checkout?: string }
  | { landed: false; reason: string; files: string[] };

/** Input of {@link advanceTarget}. */
export interface AdvanceOptions {
  /** Target branch name, e.g. `main`. */
  target: string;
  /** The tip the merge was computed against. */
  oldTip: string;
  /** The merge commit. */
  newTip: string;
  /** Paths that differ between `oldTip` and `newTip`. */
  changed: string[];
  /** Reflog message. */
  message: string;
  signal?: AbortSignal;
}

/** A checkout of the target branch: its directory and the commit its HEAD was at. */
interface Checkout {
  dir: string;
  head: string;
}

/** Worktrees (main checkout first) that have `refs/heads/<branch>` checked out. */
async function checkoutsOf(
  root: string,
  branch: string,
  signal?: AbortSignal,
): Promise<Checkout[]> {
  const out = await gitWorktree(root, ["list", "--porcelain", "-z"], { signal });
  const found: Checkout[] = [];
  let dir = "";
  let head = "";
  for (const field of splitZ(out.stdout)) {
    if (field.startsWith("worktree ")) [dir, head] = [field.slice("worktree ".length), ""];
    else if (field.startsWith("HEAD ")) head = field.slice("HEAD ".length);
    else if (field === `branch refs/heads/${branch}`) found.push({ dir, head });
  }
  return found;
}

const CHUNK = 500;

/** Paths among `paths` that the checkout at `dir` has dirty, staged, untracked or ignored. */
async function dirtyAmong(
  dir: string,
  paths: readonly string[],
  o: { signal?: AbortSignal; config: HardenedValue[] },
): Promise<string[]> {
  const dirty = new Set<string>();
  for (let i = 0; i < paths.length; i += CHUNK) {
    const out = await git([
      "status",
      "--porcelain=v1",
      "-z",
      "--untracked-files=all",
      "--ignored=matching",
      "--no-renames",
      "--",
      ...paths.slice(i, i + CHUNK),
    ], { cwd: dir, signal: o.signal, config: o.config, env: { GIT_LITERAL_PATHSPECS: "1" } });
    for (const entry of splitZ(out.stdout)) dirty.add(entry.slice(3));
  }
  const changed = new Set(paths);
  const prefixes = new Set<string>();
  for (const p of paths) {
    const parts = p.split("/");
    for (let i = 1; i < parts.length; i++) prefixes.add(parts.slice(0, i).join("/"));
  }
  for (const prefix of prefixes) {
    if (changed.has(prefix)) continue;
    const st = await Deno.lstat(join(dir, prefix)).catch(() => undefined);
    if (st && !st.isDirectory) dirty.add(prefix); // a file where the merge needs a directory
  }
  return [...dirty].sort();
}

/** Move `target` from `oldTip` to `newTip`, updating a checkout of it only where safe. */
export async function advanceTarget(root: string, options: AdvanceOptions): Promise<LandResult> {
  const { target, oldTip, newTip, signal } = options;
  const ref = `refs/heads/${target}`;
  const cas = (cwd: string) =>
    git(["update-ref", "-m", options.message, ref, newTip, oldTip], {
      cwd,
      signal,
      allowFailure: true,
    });
  const moved = (stderr: string): LandResult => ({
    landed: false,
    reason: `${target} moved while merging (${stderr.trim()}); retry`,
    files: [],
  });
  const checkouts = await checkoutsOf(root, target, signal);
  const agents = join(await Deno.realPath(root).catch(() => root), ".sdd", "worktrees") + "/";
  const agentOwned = checkouts.filter((c) => c.dir.startsWith(agents) || !isAbsolute(c.dir));
  if (agentOwned.length > 0) {
    // An agent's worktree never has the target checked out unless its git files were changed:
    // the service runs no git in a checkout an agent controls.
    return {
      landed: false,
      reason: `${target} is listed as checked out in ${agentOwned.map((c) => c.dir).join(", ")}, ` +
        "an agent's worktree: the service updates no checkout an agent controls; remove that " +
        "worktree (`git worktree remove --force <path>`)",
      files: [],
    };
  }
  if (checkouts.length === 0) {
    const r = await cas(root);
    return r.code === 0 ? { landed: true } : moved(r.stderr);
  }
  if (checkouts.length > 1) {
    return {
      landed: false,
      reason: `${target} is checked out in ${checkouts.map((c) => c.dir).join(", ")}`,
      files: [],
    };
  }
  // The listing read each checkout's HEAD: the one on the target must be at the merged-onto tip.
  const { dir, head } = checkouts[0];
  if (head !== oldTip) return moved(`HEAD is ${ref} at ${head}`);
  // The merged files are agents' work, and so are the attributes that would pick drivers for
  // them: no filter or merge driver runs while the checkout is read and updated.
  const config = await hardenedConfig(dir, { signal });
  const dirty = await dirtyAmong(dir, options.changed, { signal, config });
  if (dirty.length > 0) {
    return {
      landed: false,
      reason: `uncommitted changes in ${dirty.join(", ")} would be overwritten`,
      files: dirty,
    };
  }
  const update = await git(["read-tree", "-m", "-u", oldTip, newTip], {
    cwd: dir,
    signal,
    config,
    allowFailure: true,
  });
  if (update.code !== 0) {
    return {
      landed: false,
      reason: `the checkout at ${dir} cannot take the merge: ${update.stderr.trim()}`,
      files: [],
    };
  }
  const r = await cas(dir);
  if (r.code !== 0) {
    await git(["read-tree", "-m", "-u", newTip, oldTip], { cwd: dir, config, allowFailure: true });
    return moved(r.stderr);
  }
  return { landed: true, checkout: dir };
}
