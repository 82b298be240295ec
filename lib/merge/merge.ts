/**
 * Landing agent branches on the workspace's target branch (spec §3.1, DESIGN.md §7):
 * 1. compute the merge in the object store (`git merge-tree --write-tree`); conflicts change
 *    nothing and name the files;
 * 2. create the candidate merge commit (`git commit-tree <tree> -p <target> -p <agent>`), still
 *    unreferenced, and evaluate the task's gates on it in a temporary worktree;
 * 3. only when the gates pass, advance the target branch (see merge_in.ts), which waits rather than
 *    touch the user's uncommitted changes.
 * Branches ready at the same moment land as a train (train.ts): each its own merge commit, their
 * gates evaluated side by side, the target advanced once. Landings of one workspace run one at a
 * time. The caller appends `task_merged` or `task_verification_failed` (events.ts).
 */
import { serialised } from "../async/serialised.ts";
import { commitIdentity, git } from "../git/git.ts";
import type { SignalOptions } from "../janitor/signals.ts";
import { evaluateGates, type GateResult } from "./gates.ts";
import { type CommitTree, type ComputedMerge, computeMerge } from "./merge_tree.ts";
import { settleInterruptedMerge } from "./interrupted.ts";
import {
  finishTrain,
  type MergeOutcome,
  prepareTrain,
  type TrainMember,
  type TrainOptions,
} from "./train.ts";

export type { MergeOutcome, TrainMember, TrainOptions };

/** Input of {@link mergeAgentBranch}. */
export interface MergeOptions extends TrainMember {
  /** The branch work lands on, e.g. `main`. */
  target: string;
  /** Options of the gate checks (fuzzy-path environment, command timeout, warnings). */
  gateOptions?: SignalOptions;
  signal?: AbortSignal;
}

/** Merge `options.agent` into `options.target` in `root` when its gates pass on the result. */
export async function mergeAgentBranch(
  root: string,
  options: MergeOptions,
): Promise<MergeOutcome> {
  const { target, gateOptions, signal, ...member } = options;
  const [outcome] = await mergeAgentBranches(root, {
    target,
    members: [member],
    gateOptions,
    signal,
  });
  return outcome;
}

/** Options of {@link mergeAgentBranches}. */
export interface TrainRunOptions extends TrainOptions {
  /**
   * Called once the train's candidates are made and gated (nothing landed yet): a train asked
   * for now is prepared on top of them while this one lands.
   */
  onPrepared?: () => void;
}

/** What the train asked for last in a repository leaves behind (see {@link mergeAgentBranches}). */
interface Trail {
  /** The tip it leaves the target at if it lands as prepared (undefined: not known). */
  leaves: Promise<CommitTree | undefined>;
  /** The tip it did leave the target at, once it has landed (undefined: not as prepared). */
  left: Promise<CommitTree | undefined>;
}

const trails = new Map<string, Trail>();

/**
 * Land `options.members` on `options.target` in `root` as one train, in their order. Trains of
 * one repository land one at a time, in the order they were asked for; while one lands, the next
 * is prepared (merged and gated in the object store) on top of the tip the one before it leaves.
 * It lands as prepared only when that one did leave the target there (the advance is a
 * compare-and-swap from that tip as well); otherwise it is prepared again from the actual tip.
 */
export async function mergeAgentBranches(
  root: string,
  options: TrainRunOptions,
): Promise<MergeOutcome[]> {
  const { onPrepared, ...train } = options;
  const before = trails.get(root);
  const leaves = deferred<CommitTree | undefined>();
  const left = deferred<CommitTree | undefined>();
  const mine = { leaves: leaves.promise, left: left.promise };
  trails.set(root, mine);
  try {
    const onto = before && train.members.length > 0 ? await before.leaves : undefined;
    // Made while the train before lands: a wrong guess costs only unreferenced objects.
    const early = onto && await prepareTrain(root, train, onto).catch(() => undefined);
    if (early) {
      leaves.resolve(early.leaves);
      onPrepared?.();
    }
    return await serialised(`merge:${root}`, async () => {
      const landedOn = before && await before.left;
      const prepared = early && landedOn?.commit === early.tip.commit ? early : undefined;
      if (!prepared) {
        if (train.members.length === 0) return [];
        // A merge a killed process left in the checkout is settled before the tips are read.
        await settleInterruptedMerge(root, { signal: train.signal });
      }
      const ready = prepared ?? await prepareTrain(root, train);
      if (!early) {
        leaves.resolve(ready.leaves);
        onPrepared?.();
      }
      const done = await finishTrain(root, train, ready);
      left.resolve(done.left);
      return done.outcomes;
    });
  } finally {
    leaves.resolve(undefined);
    left.resolve(undefined);
    if (trails.get(root) === mine) trails.delete(root);
  }
}

/** A promise and the function that settles it (later calls do nothing). */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => resolve = r);
  return { promise, resolve };
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
  | { status: "gates_failed"; gates: GateResult; tree: string }
  | {
    status: "ready";
    /** The candidate merge commit (unreferenced) whose tree the gates passed on. */
    commit: string;
    merge: Extract<ComputedMerge, { kind: "clean" }>;
    gates: GateResult;
  };

/**
 * Steps 1 and 2 of a landing without step 3: the merge of `options.agent` into `options.target`
 * (a branch, or the remote-tracking ref of a pull request's base) computed in the object store,
 * and the task's gates on its tree. Landing through a pull request stops here: the host merges.
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
  if (!gates.passed) return { status: "gates_failed", gates, tree: merge.tree };
  return { status: "ready", commit, merge, gates };
}
