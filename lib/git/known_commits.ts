/**
 * What this process already knows of a repository's commits, so that the target's tip can be read
 * from its ref file instead of a git process (issue 32: a `rev-parse` per task for the tip a
 * worktree is cut from, a `merge-base --is-ancestor` per reap).
 *
 * Only facts that cannot change are kept: an object id git named as a commit (`rev^{commit}`, the
 * output of `commit-tree`) is that commit for good, and a commit contains its parents and what
 * they contain for good — ids are the hash of the content. The target's ref is read from its loose
 * file (lib/git/ref_files.ts: no link followed, symbolic refs only within the git directory) and
 * trusted only when everything about the repository is plain: `<root>/.git` a real directory with
 * no `commondir`, no reftable, no variable of the service's environment that moves git's
 * directories, and the id it holds a commit git named in this repository. Anything else — a
 * packed ref, a moved target whose new commit this process never saw, a symbolic ref into a
 * packed one, a link — is asked of git, as before.
 */
import { join } from "node:path";
import { resolveCommit } from "./git.ts";
import { resolveRef } from "./ref_files.ts";

/** Repositories remembered at most; the oldest go. */
const MAX_REPOS = 64;
/** Commits remembered per repository at most; the oldest go. */
const MAX_COMMITS = 4_096;
/** Known commits walked at most to find an ancestor (a longer walk only asks git). */
const MAX_WALK = 256;

/** By repository root: each known commit and those of its parents that are known. */
const repos = new Map<string, Map<string, readonly string[]>>();

/**
 * For tests and benchmarks: target tips read from files and asked of git, and ancestry answered
 * without git.
 */
export const knownCommitCounts = { fromFiles: 0, asked: 0, contained: 0 };

/** The commits of `root` known so far (made when asked for). */
function commitsOf(root: string): Map<string, readonly string[]> {
  let commits = repos.get(root);
  if (!commits) {
    repos.set(root, commits = new Map());
    while (repos.size > MAX_REPOS) repos.delete(repos.keys().next().value!);
  }
  return commits;
}

/**
 * Note that `oid` is a commit of the repository at `root` (git named it so) with `parents` (when
 * known, as `commit-tree` was given them): it contains them and whatever they contain.
 */
export function noteCommit(root: string, oid: string, parents: readonly string[] = []): void {
  const commits = commitsOf(root);
  const known = commits.get(oid) ?? [];
  commits.delete(oid); // re-inserted: the newest is kept longest
  commits.set(oid, parents.length > 0 ? parents : known);
  while (commits.size > MAX_COMMITS) commits.delete(commits.keys().next().value!);
}

/**
 * Whether `commit` is known to hold `ancestor` in its history (or to be it): a walk down the
 * parents noted, at most {@link MAX_WALK} commits. False means "not known", never "not held".
 */
export function knownToContain(root: string, commit: string, ancestor: string): boolean {
  const commits = repos.get(root);
  const seen = new Set<string>();
  const todo = [commit];
  while (todo.length > 0 && seen.size < MAX_WALK) {
    const at = todo.shift()!;
    if (at === ancestor) return true;
    if (seen.has(at)) continue;
    seen.add(at);
    todo.push(...(commits?.get(at) ?? []));
  }
  return false;
}

/** Variables that move the directories git reads in `root` (the service's own environment). */
const MOVERS = ["GIT_DIR", "GIT_COMMON_DIR", "GIT_WORK_TREE", "GIT_NAMESPACE"];

/** Whether the git directory of `root` is `<root>/.git` and holds its refs as files. */
export function plainRepository(root: string): string | undefined {
  try {
    if (MOVERS.some((k) => Deno.env.get(k) !== undefined)) return undefined;
  } catch {
    return undefined; // no permission to read the environment
  }
  if (!root.startsWith("/")) return undefined;
  const dir = join(root, ".git");
  const kind = (path: string) => {
    try {
      const st = Deno.lstatSync(path);
      return st.isSymlink ? "link" : st.isDirectory ? "dir" : "other";
    } catch {
      return "missing";
    }
  };
  if (kind(dir) !== "dir" || kind(join(dir, "refs")) !== "dir") return undefined;
  if (kind(join(dir, "commondir")) !== "missing") return undefined;
  if (kind(join(dir, "reftable")) !== "missing") return undefined;
  return dir;
}

/**
 * The commit `ref` names in the repository at `root`, as its loose ref file says, when the file
 * answers plainly and names a commit git already named in this repository; undefined otherwise.
 */
export async function targetTipFromFiles(root: string, ref: string): Promise<string | undefined> {
  const dir = plainRepository(root);
  if (!dir) return undefined;
  const read = await resolveRef(dir, ref); // no packed refs: a packed one is asked of git
  if (read.kind !== "commit" || !repos.get(root)?.has(read.oid)) return undefined;
  return read.oid;
}

/** Options of {@link targetTip}. */
export interface TargetTipOptions {
  signal?: AbortSignal;
}

/**
 * The commit `ref` (a full ref) names in the repository at `root`: from its ref file when that
 * answers plainly with a known commit, else `git rev-parse --verify <ref>^{commit}` (then known).
 * Undefined when it names no commit.
 */
export async function targetTip(
  root: string,
  ref: string,
  options: TargetTipOptions = {},
): Promise<string | undefined> {
  const known = await targetTipFromFiles(root, ref);
  if (known) {
    knownCommitCounts.fromFiles++;
    return known;
  }
  knownCommitCounts.asked++;
  const tip = await resolveCommit(ref, { cwd: root, signal: options.signal });
  if (tip) noteCommit(root, tip);
  return tip;
}

/**
 * Whether the target `ref` of the repository at `root` holds `commit`, when that is known without
 * git: its tip, read from files, is `commit` or a commit known to contain it. `false` means "not
 * known" (ask git), never "not contained".
 */
export async function knownToBeIn(root: string, ref: string, commit: string): Promise<boolean> {
  const tip = await targetTipFromFiles(root, ref);
  const known = tip !== undefined && knownToContain(root, tip, commit);
  if (known) knownCommitCounts.contained++;
  return known;
}
