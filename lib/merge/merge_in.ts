/**
 * Merge-in: advancing a local target branch without damaging the user's checkout (DESIGN.md §7).
 *
 * When no worktree has the target branch checked out, the ref moves with a compare-and-swap
 * (`git update-ref <ref> <new> <old>`). When the user has it checked out:
 * 1. every path the merge changes is checked against the checkout: modified, staged, untracked
 *    and even ignored files at those paths (or an untracked file where the merge needs a
 *    directory) make the merge wait — `read-tree` would silently overwrite ignored files;
 * 2. the merge's intent — the branch, the checkout, both tips, and every changed path with its
 *    exact entry (mode and blob) before and after — is recorded durably (checkout_intent.ts),
 *    then `git read-tree -m -u <old> <new>` (the two-tree "switch" that `git checkout` uses)
 *    updates exactly the paths that differ between the two commits, in index and working tree,
 *    and refuses as a whole, changing nothing, if it would lose anything; unrelated staged and
 *    unstaged changes are carried over untouched;
 * 3. the ref moves with a compare-and-swap, and the record is cleared; if the user committed in
 *    between, the working tree update is reverted the same way and the merge waits.
 * A process killed between steps 2 and 3 leaves the record: the next landing settles it first
 * (interrupted.ts) — complete, undone when the checkout holds exactly the recorded entries, or
 * held, touching nothing, when it holds anything else. A wait that only a person can end (their
 * changes in the way) says so (`stuck`); a branch that moved is simply retried.
 */
import { isAbsolute, join } from "node:path";
import { git, type GitOptions, splitZ } from "../git/git.ts";
import { hardenedConfig } from "../git/agent_tree.ts";
import { crashPoint } from "../util/crash_points.ts";
import { checkoutsOf } from "./checkouts.ts";
import { clearIntent, recordIntent } from "./checkout_intent.ts";
import { changedEntries, type ChangedEntry } from "./merge_tree.ts";
import { settleInterruptedMerge } from "./interrupted.ts";
import { switchTrees } from "./switch_trees.ts";

/** Outcome of {@link advanceTarget}. */
export type MergeInResult =
  | { landed: true; checkout?: string }
  | {
    landed: false;
    reason: string;
    files: string[];
    /** Only a person can end this wait (their changes are in the way); retrying alone will not. */
    stuck: boolean;
  };

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
  /** The same paths with their entries in each (read from git when absent). */
  entries?: ChangedEntry[];
  /** Reflog message. */
  message: string;
  signal?: AbortSignal;
}

const CHUNK = 500;

/** Paths among `paths` that the checkout at `dir` has dirty, staged, untracked or ignored. */
async function dirtyAmong(
  dir: string,
  paths: readonly string[],
  o: { signal?: AbortSignal; config: GitOptions["config"] },
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
export async function advanceTarget(root: string, options: AdvanceOptions): Promise<MergeInResult> {
  const { target, oldTip, newTip, signal } = options;
  const ref = `refs/heads/${target}`;
  const cas = (cwd: string) =>
    git(["update-ref", "-m", options.message, ref, newTip, oldTip], {
      cwd,
      signal,
      allowFailure: true,
    });
  const moved = (stderr: string): MergeInResult => ({
    landed: false,
    reason: `${target} moved while merging (${stderr.trim()}); retry`,
    files: [],
    stuck: false,
  });
  const waits = (reason: string, files: string[] = []): MergeInResult => ({
    landed: false,
    reason,
    files,
    stuck: true,
  });
  // What a killed process left in the checkout is settled before anything else touches it.
  // The listing reads only: it runs beside the settling, and is read again if that changed any.
  const listed = checkoutsOf(root, target, signal);
  listed.catch(() => {}); // awaited below, or replaced
  const interrupted = await settleInterruptedMerge(root, { signal });
  if (interrupted.kind === "held") return waits(interrupted.reason, interrupted.files);
  const checkouts = interrupted.kind === "none"
    ? await listed
    : await checkoutsOf(root, target, signal);
  const agents = join(await Deno.realPath(root).catch(() => root), ".sdd", "worktrees") + "/";
  const agentOwned = checkouts.filter((c) => c.dir.startsWith(agents) || !isAbsolute(c.dir));
  if (agentOwned.length > 0) {
    // An agent's worktree never has the target checked out unless its git files were changed:
    // the service runs no git in a checkout an agent controls.
    return waits(
      `${target} is listed as checked out in ${agentOwned.map((c) => c.dir).join(", ")}, ` +
        "an agent's worktree: the service updates no checkout an agent controls; remove that " +
        "worktree (`git worktree remove --force <path>`)",
    );
  }
  if (checkouts.length === 0) {
    const r = await cas(root);
    if (r.code !== 0) return moved(r.stderr);
    await crashPoint("merge.ref_moved");
    return { landed: true };
  }
  if (checkouts.length > 1) {
    return waits(`${target} is checked out in ${checkouts.map((c) => c.dir).join(", ")}`);
  }
  // The listing read each checkout's HEAD: the one on the target must be at the merged-onto tip.
  const { dir, head } = checkouts[0];
  if (head !== oldTip) return moved(`HEAD is ${ref} at ${head}`);
  // The merged files are agents' work, and so are the attributes that would pick drivers for
  // them: no filter or merge driver runs while the checkout is read and updated.
  const config = () => hardenedConfig(dir, { signal }); // listed right before each call
  const dirty = await dirtyAmong(dir, options.changed, { signal, config });
  if (dirty.length > 0) {
    return waits(
      `uncommitted changes in ${dirty.join(", ")} would be overwritten: commit or stash them`,
      dirty,
    );
  }
  await recordIntent(root, {
    v: 1,
    target,
    checkout: dir,
    old_tip: oldTip,
    new_tip: newTip,
    paths: options.entries ?? (await changedEntries(root, [[oldTip, newTip]], { signal }))[0],
    pid: Deno.pid,
    message: options.message,
    at: new Date().toISOString(),
  });
  await crashPoint("merge.intent_recorded");
  const update = await switchTrees(oldTip, newTip, { cwd: dir, signal, config });
  if (update.code !== 0) {
    await clearIntent(root); // refused as a whole: nothing changed
    return waits(`the checkout at ${dir} cannot take the merge: ${update.stderr.trim()}`);
  }
  await crashPoint("merge.checkout_updated");
  const r = await cas(dir);
  if (r.code !== 0) {
    const back = await switchTrees(newTip, oldTip, { cwd: dir, config });
    // Reverted: nothing of the merge is left. Otherwise the record stays for the next landing.
    if (back.code === 0) await clearIntent(root);
    return moved(r.stderr);
  }
  await crashPoint("merge.ref_moved");
  await clearIntent(root);
  await crashPoint("merge.intent_cleared");
  return { landed: true, checkout: dir };
}
