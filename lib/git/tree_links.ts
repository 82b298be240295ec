/**
 * The symbolic links of a commit's tree, kept by commit id — a commit's tree never changes — for
 * the protected-paths judgement (lib/protect/diff_paths.ts): the tasks cut from one target tip
 * share it. Listed with one `ls-tree` per commit, or known without one when the commit is a merge
 * this process computed onto a commit whose links are known: its links are those, less every path
 * the recursive `diff-tree` between the two names (it lists every leaf whose mode or id differs,
 * with `--no-renames` both sides of a move), plus the links it leaves (issue 32: an `ls-tree` for
 * every new target tip, 13 in a run of 50 tasks).
 */
import { git, splitZ } from "./git.ts";

/** git's mode of a symbolic link. */
export const LINK_MODE = "120000";

/** A link of a tree: its path and its blob's id. */
export interface TreeLinkEntry {
  path: string;
  id: string;
}

/** A leaf that differs between two trees, with its entry on the later side (null: gone). */
export interface LeafChange {
  path: string;
  new: { mode: string; oid: string } | null;
}

/** Commits whose links are kept at most; the oldest go. */
const MAX_COMMITS = 64;
const known = new Map<string, Promise<TreeLinkEntry[]>>();

/** How many trees were listed with `ls-tree`, answered from memory, or derived from a merge. */
export const treeListingCounts = { listed: 0, remembered: 0, derived: 0 };

/** Every link of `commit`'s tree (`ls-tree -r`), asked of git. */
export async function listTreeLinks(cwd: string, commit: string): Promise<TreeLinkEntry[]> {
  const entries = splitZ(
    (await git(["ls-tree", "-r", "-z", "--full-tree", commit], { cwd })).stdout,
  );
  const links: TreeLinkEntry[] = [];
  for (const entry of entries) {
    // "<mode> <type> <id>\t<path>"
    const tab = entry.indexOf("\t");
    const [mode, , id] = entry.slice(0, tab).split(" ");
    if (mode === LINK_MODE) links.push({ path: entry.slice(tab + 1), id });
  }
  return links;
}

function keep(commit: string, links: Promise<TreeLinkEntry[]>): void {
  known.set(commit, links);
  links.catch(() => {
    if (known.get(commit) === links) known.delete(commit);
  });
  while (known.size > MAX_COMMITS) known.delete(known.keys().next().value!);
}

/** The links of the commit `commit` (an id), listed once. */
export function linksOfCommit(cwd: string, commit: string): Promise<TreeLinkEntry[]> {
  const kept = known.get(commit);
  if (kept) {
    treeListingCounts.remembered++;
    return kept;
  }
  treeListingCounts.listed++;
  const listed = listTreeLinks(cwd, commit);
  keep(commit, listed);
  return listed;
}

/** The links of a tree: `before`'s, less the paths `changes` touch, plus the links they leave. */
export function linksAfter(
  before: readonly TreeLinkEntry[],
  changes: readonly LeafChange[],
): TreeLinkEntry[] {
  const touched = new Set(changes.map((c) => c.path));
  return [
    ...before.filter((l) => !touched.has(l.path)),
    ...changes.flatMap((c) => c.new?.mode === LINK_MODE ? [{ path: c.path, id: c.new.oid }] : []),
  ];
}

/**
 * Note that `to` (a commit id) has `from`'s tree changed by exactly `changes` — the recursive,
 * `--no-renames` `diff-tree` of their two trees: when `from`'s links are known, `to`'s are known
 * from them. Nothing is noted otherwise (it is listed when asked).
 */
export function noteTreeChange(from: string, to: string, changes: readonly LeafChange[]): void {
  const before = known.get(from);
  if (!before || known.has(to) || from === to) return;
  treeListingCounts.derived++;
  keep(to, before.then((links) => linksAfter(links, changes)));
}
