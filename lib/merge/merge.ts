/**
 * Landing an agent branch on the workspace's target branch (spec §3.1, DESIGN.md §7):
 * 1. compute the merge in the object store (`git merge-tree --write-tree`); conflicts change
 *    nothing and name the files;
 * 2. create the candidate merge commit (`git commit-tree <tree> -p <target> -p <agent>`), still
 *    unreferenced, and evaluate the task's gates on it in a temporary worktree;
 * 3. only when the gates pass, advance the target branch (see land.ts), which waits rather than
 *    touch the user's uncommitted changes.
 * The caller appends `task_merged` or `task_verification_failed` (events.ts).
 */
import { serialised } from "../async/serialised.ts";
import { commitIdentity, git } from "../git/git.ts";
import type { SignalOptions } from "../janitor/signals.ts";
import { evaluateGates, type GateResult, type GateSpec } from "./gates.ts";
import { advanceTarget } from "./land.ts";
import { type ComputedMerge, computeMerge } from "./merge_tree.ts";

/** Input of {@link mergeAgentBranch}. */
export interface MergeOptions {
  /** The branch work lands on, e.g. `main`. */
  target: string;
  /** The agent branch (or commit) to land, e.g. `agent/<session>`. */
  agent: string;
  taskId: string;
  /** Checks the merged tree must pass; none means gate-less. */
  gates?: GateSpec;
  /** Merge commit message (default names the branch and task). */
  message?: string;
  /** Options of the gate checks (fuzzy-path environment, command timeout, warnings). */
  gateOptions?: SignalOptions;
  /**
   * Gates already evaluated on a tree (by the verification step): when the merge produces that
   * same tree they are not run again. A tree is content-addressed, so the checks saw these bytes.
   */
  evaluated?: { tree: string; gates: GateResult };
  signal?: AbortSignal;
}

/** Outcome of {@link mergeAgentBranch}. Only `merged` changed anything visible. */
export type MergeOutcome =
  | {
    status: "merged";
    /** The new tip of the target (the target's old tip when there was nothing to land). */
    commit: string;
    changed_files: string[];
    gates: GateResult;
  }
  | { status: "conflict"; files: string[] }
  | { status: "gates_failed"; gates: GateResult }
  | { status: "waiting"; reason: string; files: string[]; gates: GateResult };

/** Merge `options.agent` into `options.target` in `root` when its gates pass on the result. */
export function mergeAgentBranch(root: string, options: MergeOptions): Promise<MergeOutcome> {
  return serialised(`merge:${root}`, () => mergeNow(root, options));
}

/** The merge commit a landing would create, not yet referenced; or the conflicting files. */
export type Candidate =
  | { kind: "conflict"; files: string[] }
  | { kind: "clean"; merge: Extract<ComputedMerge, { kind: "clean" }>; commit: string };

/** Compute the merge of `agent` into `target` and its (unreferenced) merge commit. */
export async function prepareCandidate(
  root: string,
  options: Pick<MergeOptions, "target" | "agent" | "taskId" | "message" | "signal">,
): Promise<Candidate> {
  const { target, agent, signal } = options;
  const merge = await computeMerge(root, target, agent, { signal });
  if (merge.kind === "conflict") return { kind: "conflict", files: merge.files };
  let commit = merge.target_tip;
  if (!merge.up_to_date) {
    const message = options.message ?? `service: merge ${agent} (task ${options.taskId})`;
    const args = ["commit-tree", merge.tree, "-p", merge.target_tip, "-p", merge.agent_tip];
    commit = (await git([...args, "-m", message], {
      cwd: root,
      signal,
      env: await commitIdentity(root),
    })).stdout.trim();
  }
  return { kind: "clean", merge, commit };
}

/** Outcome of {@link gateAgentBranch}: nothing visible changed in any case. */
export type GateOutcome =
  | { status: "conflict"; files: string[] }
  | { status: "gates_failed"; gates: GateResult }
  | {
    status: "ready";
    /** The candidate merge commit (unreferenced) whose tree the gates passed on. */
    commit: string;
    merge: Extract<ComputedMerge, { kind: "clean" }>;
    gates: GateResult;
  };

/**
 * Steps 1 and 2 of a landing: the merge of `options.agent` into `options.target` computed in the
 * object store, and the task's gates on its tree. Landing through a pull request stops here
 * (the host merges); {@link mergeAgentBranch} goes on to advance the target.
 */
export async function gateAgentBranch(root: string, options: MergeOptions): Promise<GateOutcome> {
  const candidate = await prepareCandidate(root, options);
  if (candidate.kind === "conflict") return { status: "conflict", files: candidate.files };
  const { merge, commit } = candidate;
  const gates = options.evaluated?.tree === merge.tree
    ? { ...options.evaluated.gates, commit }
    : await evaluateGates(root, commit, options.gates ?? {}, {
      ...options.gateOptions,
      signal: options.signal,
    });
  if (!gates.passed) return { status: "gates_failed", gates };
  return { status: "ready", commit, merge, gates };
}

async function mergeNow(root: string, options: MergeOptions): Promise<MergeOutcome> {
  const { target, agent, signal } = options;
  const gated = await gateAgentBranch(root, options);
  if (gated.status !== "ready") return gated;
  const { merge, commit, gates } = gated;
  if (merge.up_to_date) return { status: "merged", commit, changed_files: [], gates };
  const landed = await advanceTarget(root, {
    target,
    oldTip: merge.target_tip,
    newTip: commit,
    changed: merge.changed,
    message: `service: merge ${agent} (task ${options.taskId})`,
    signal,
  });
  if (!landed.landed) {
    return { status: "waiting", reason: landed.reason, files: landed.files, gates };
  }
  return { status: "merged", commit, changed_files: merge.changed, gates };
}
