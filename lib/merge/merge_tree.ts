/**
 * The result of merging an agent branch into the target, computed without touching any checkout,
 * index or ref: `git merge-tree --write-tree` (git >= 2.38) writes only objects. The pieces are
 * also what a merge train (train.ts) chains: the tips of many branches resolved in one call, one
 * branch merged onto a commit, and the paths each merge changes listed in one call.
 */
import { git, GitError, type GitOptions, resolveCommit, splitZ, targetRef } from "../git/git.ts";
import { noteCommit } from "../git/known_commits.ts";

/** A merge computed in the object store. */
export type ComputedMerge =
  | {
    kind: "clean";
    target_tip: string;
    agent_tip: string;
    tree: string;
    /** True when the agent's tip is already contained in the target (nothing to land). */
    up_to_date: boolean;
    /** Paths whose content differs between the target tip and the merged tree. */
    changed: string[];
  }
  | { kind: "conflict"; target_tip: string; agent_tip: string; files: string[] };

/** A ref that must exist does not. */
class MissingRefError extends Error {
  constructor(readonly ref: string, readonly root: string) {
    super(`${ref} does not name a commit in ${root}`);
    this.name = "MissingRefError";
  }
}

const OID = /^[0-9a-f]{40,64}$/;

/** A commit and its tree. */
export interface CommitTree {
  commit: string;
  tree: string;
}

/** The target branch's tip (with its tree) and the commits `agents` name, in their order. */
export interface Tips {
  target: CommitTree;
  agents: string[];
}

/**
 * Resolve the target (a branch, or a full ref such as the remote-tracking ref pull-request
 * landing gates against) and every one of `agents` (branches or commits) in one call.
 */
export async function resolveTips(
  root: string,
  target: string,
  agents: readonly string[],
  options: Omit<GitOptions, "cwd"> = {},
): Promise<Tips> {
  const o = { ...options, cwd: root };
  const ref = targetRef(target);
  const revs = [`${ref}^{commit}`, `${ref}^{tree}`, ...agents.map((a) => `${a}^{commit}`)];
  const r = await git(["rev-parse", "--end-of-options", ...revs], { ...o, allowFailure: true });
  // Older gits echo the marker itself (it still ends option parsing).
  const lines = r.stdout.split("\n").filter((l) => l !== "" && l !== "--end-of-options");
  if (r.code === 0 && lines.length === revs.length && lines.every((l) => OID.test(l))) {
    noteCommit(root, lines[0]); // git named it a commit (`^{commit}`)
    return { target: { commit: lines[0], tree: lines[1] }, agents: lines.slice(2) };
  }
  // Name the one that is missing.
  for (const rev of [ref, ...agents]) {
    if (!await resolveCommit(rev, o)) throw new MissingRefError(rev, root);
  }
  throw new GitError(["rev-parse", ...revs], root, r.code, r.stderr);
}

/** One branch merged onto a commit in the object store. */
export type MergedOnto =
  | { kind: "clean"; tree: string; up_to_date: boolean }
  | { kind: "conflict"; files: string[] };

/** Merge `agentTip` onto `base` (a commit and its tree) in the object store only. */
export async function mergeOnto(
  root: string,
  base: CommitTree,
  agentTip: string,
  options: Omit<GitOptions, "cwd"> = {},
): Promise<MergedOnto> {
  const o = { ...options, cwd: root };
  const args = ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z"];
  const r = await git([...args, base.commit, agentTip], { ...o, allowFailure: true });
  const [tree, ...rest] = splitZ(r.stdout);
  if (r.code === 1 && tree && OID.test(tree)) {
    return { kind: "conflict", files: [...new Set(rest)].sort() };
  }
  if (r.code !== 0 || !tree || !OID.test(tree)) {
    throw new GitError(
      ["merge-tree", "--write-tree", base.commit, agentTip],
      root,
      r.code,
      r.stderr,
    );
  }
  // Contained in the base only if merging changes nothing; asked only then.
  const upToDate = tree === base.tree && (await git(
        ["merge-base", "--is-ancestor", agentTip, base.commit],
        { ...o, allowFailure: true },
      )).code === 0;
  return { kind: "clean", tree, up_to_date: upToDate };
}

/** A path's entry in a tree or the index: its mode and blob; null when the path is absent. */
export type Entry = { mode: string; oid: string } | null;

/** One path that differs between two trees: its entry in each. */
export interface ChangedEntry {
  path: string;
  old: Entry;
  new: Entry;
}

const ZERO = /^0+$/;

/** The paths that differ between each pair of trees (or commits), with both entries, in one call. */
export async function changedEntries(
  root: string,
  pairs: readonly (readonly [from: string, to: string])[],
  options: Omit<GitOptions, "cwd"> = {},
): Promise<ChangedEntry[][]> {
  if (pairs.length === 0) return [];
  // `--stdin` prints each pair as a `<from> <to>` line, then that pair's records, each
  // `:<old mode> <new mode> <old oid> <new oid> <status>` and the path, NUL-terminated.
  const headers = pairs.map(([from, to]) => `${from} ${to}\n`);
  const out = (await git(["diff-tree", "-r", "--no-renames", "-z", "--stdin"], {
    ...options,
    cwd: root,
    stdin: headers.join(""),
  })).stdout;
  const lists: ChangedEntry[][] = [];
  let at = 0;
  for (let i = 0; i < pairs.length; i++) {
    if (!out.startsWith(headers[i], at)) {
      throw new GitError(["diff-tree", "--stdin"], root, 0, `unexpected output at ${at}`);
    }
    at += headers[i].length;
    const entries: ChangedEntry[] = [];
    while (at < out.length && out[at] === ":") {
      const metaEnd = out.indexOf("\0", at);
      const pathEnd = metaEnd < 0 ? -1 : out.indexOf("\0", metaEnd + 1);
      if (pathEnd < 0) break;
      const [oldMode, newMode, oldOid, newOid] = out.slice(at + 1, metaEnd).split(" ");
      entries.push({
        path: out.slice(metaEnd + 1, pathEnd),
        old: ZERO.test(oldMode) ? null : { mode: oldMode, oid: oldOid },
        new: ZERO.test(newMode) ? null : { mode: newMode, oid: newOid },
      });
      at = pathEnd + 1;
    }
    lists.push(entries);
  }
  return lists;
}

/** The paths whose content differs between each pair of trees, in one call. */
async function changedPaths(
  root: string,
  pairs: readonly (readonly [from: string, to: string])[],
  options: Omit<GitOptions, "cwd"> = {},
): Promise<string[][]> {
  return (await changedEntries(root, pairs, options)).map((list) => list.map((e) => e.path));
}

/** Merge `agent` (a branch or commit) into `target` (a branch or full ref) in the object store only. */
export async function computeMerge(
  root: string,
  target: string,
  agent: string,
  options: Omit<GitOptions, "cwd"> = {},
): Promise<ComputedMerge> {
  const tips = await resolveTips(root, target, [agent], options);
  const base = { target_tip: tips.target.commit, agent_tip: tips.agents[0] };
  const merged = await mergeOnto(root, tips.target, base.agent_tip, options);
  if (merged.kind === "conflict") return { ...base, ...merged };
  const [changed] = await changedPaths(root, [[tips.target.tree, merged.tree]], options);
  return { ...base, ...merged, changed };
}
