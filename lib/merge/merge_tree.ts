/**
 * The result of merging an agent branch into the target, computed without touching any checkout,
 * index or ref: `git merge-tree --write-tree` (git >= 2.38) writes only objects.
 */
import { git, GitError, type GitOptions, resolveCommit, splitZ, targetRef } from "../git/git.ts";

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

/** Merge `agent` (a branch or commit) into `target` (a branch or full ref) in the object store only. */
export async function computeMerge(
  root: string,
  target: string,
  agent: string,
  options: Omit<GitOptions, "cwd"> = {},
): Promise<ComputedMerge> {
  const o = { ...options, cwd: root };
  const targetTip = await resolveCommit(targetRef(target), o);
  if (!targetTip) throw new MissingRefError(targetRef(target), root);
  const agentTip = await resolveCommit(agent, o);
  if (!agentTip) throw new MissingRefError(agent, root);
  const base = { target_tip: targetTip, agent_tip: agentTip };
  const r = await git(
    ["merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", targetTip, agentTip],
    { ...o, allowFailure: true },
  );
  const [tree, ...rest] = splitZ(r.stdout);
  if (r.code === 1 && tree && OID.test(tree)) {
    return { kind: "conflict", ...base, files: [...new Set(rest)].sort() };
  }
  if (r.code !== 0 || !tree || !OID.test(tree)) {
    throw new GitError(["merge-tree", "--write-tree", targetTip, agentTip], root, r.code, r.stderr);
  }
  const upToDate = (await git(
    ["merge-base", "--is-ancestor", agentTip, targetTip],
    { ...o, allowFailure: true },
  )).code === 0;
  const changed = splitZ(
    (await git(["diff-tree", "-r", "--no-renames", "--name-only", "-z", targetTip, tree], o))
      .stdout,
  );
  return { kind: "clean", ...base, tree, up_to_date: upToDate, changed };
}
