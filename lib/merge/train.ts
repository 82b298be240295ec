/**
 * Landing several agent branches at once, a merge train (DESIGN.md §7: work lands only after its
 * gates pass on the tree the merge produces). Each task still lands as its own merge commit:
 * 1. resolve the target's tip and every agent tip in one call, then merge the branches one onto
 *    the other in the object store (`merge-tree`, `commit-tree`): each candidate merge commit has
 *    the one before it as first parent; a branch that conflicts is left out of the chain;
 * 2. evaluate every candidate's gates on its own tree, several at once, each in its own scratch
 *    worktree (gates.ts);
 * 3. advance the target once, to the last candidate before the first whose gates failed (see
 *    merge_in.ts). The candidates after a failed one hold its work: they are merged again, as a new
 *    train from the new tip. When the target cannot advance (the user's changes are in the way,
 *    or it moved), each candidate lands alone, in order, and the one in the way waits.
 * Before step 1, a merge a killed process left half done in the checkout is settled
 * (interrupted.ts). A branch whose work is an empty diff from its base is `unchanged`: its gates
 * run on the target's tree as it is, but it gets no merge commit and lands nothing.
 */
import { Bounded } from "../async/bounded.ts";
import { commitIdentity, git, targetRef } from "../git/git.ts";
import { noteCommit } from "../git/known_commits.ts";
import type { SignalOptions } from "../janitor/signals.ts";
import { evaluateGates, type GateResult, type GateSpec } from "./gates.ts";
import { advanceTarget } from "./merge_in.ts";
import { noteTreeChange } from "../git/tree_links.ts";
import { settleInterruptedMerge } from "./interrupted.ts";
import { type ChainLink, chainMerges } from "./merge_chain.ts";
import {
  changedEntries,
  type ChangedEntry,
  type CommitTree,
  mergeOnto,
  resolveTips,
  type Tips,
} from "./merge_tree.ts";

/** One branch to land. */
export interface TrainMember {
  /** The agent branch (or commit) to land, e.g. `agent/<session>`. */
  agent: string;
  /** How messages name it when `agent` is a commit (its branch, `agent/<session>`). */
  name?: string;
  taskId: string;
  /** Checks the merged tree must pass; none means gate-less. */
  gates?: GateSpec;
  /** Merge commit message (default names the branch and task). */
  message?: string;
  /**
   * The commit its work was cut from: when its tip has the same tree its work is an empty diff
   * and lands nothing (`unchanged`). Without it, a branch the target already contains is taken
   * as landed (a merge a killed process completed).
   */
  base?: string;
  /**
   * Gates already evaluated on a tree (by the verification step): when the merge produces that
   * same tree they are not run again. A tree is content-addressed, so the checks saw these bytes.
   */
  evaluated?: { tree: string; gates: GateResult };
}

/** How messages name `member`. */
function nameOf(member: TrainMember): string {
  return member.name ?? member.agent;
}

/** Input of {@link mergeTrain}. */
export interface TrainOptions {
  /** The branch work lands on, e.g. `main`. */
  target: string;
  /** The branches, in the order they land. */
  members: TrainMember[];
  /** Options of the gate checks (fuzzy-path environment, command timeout, warnings). */
  gateOptions?: SignalOptions;
  /** How many candidates' gates run at once (default: the number of cores). */
  gateConcurrency?: number;
  signal?: AbortSignal;
}

/** Outcome of one member. Only `merged` changed anything visible. */
export type MergeOutcome =
  | {
    status: "merged";
    /** Its merge commit (the target's tip when there was nothing to land). */
    commit: string;
    /** The tree of that commit. */
    tree: string;
    /** Paths its merge changed. */
    changed_files: string[];
    gates: GateResult;
  }
  | { status: "conflict"; files: string[] }
  | { status: "gates_failed"; gates: GateResult; tree: string }
  /**
   * Its merge changes nothing on the target (no commits, or only changes already there): its
   * gates passed on the target's tree, but nothing lands and no merge commit is made or named.
   */
  | { status: "unchanged"; gates: GateResult; tree: string }
  | {
    status: "waiting";
    reason: string;
    files: string[];
    /** Only a person can end the wait (their changes are in the way): see merge_in.ts. */
    stuck: boolean;
    gates: GateResult;
    tree: string;
  };

/** A member's merge commit, not yet on the target. */
export interface Candidate extends CommitTree {
  /** Index of its member. */
  index: number;
  /** The commit it was merged onto (the target's tip or the candidate before it). */
  parent: CommitTree;
  /** Its merge changes nothing: `commit` is its parent's, and it lands nothing. */
  unchanged?: true;
}

/** Land `options.members` on `options.target`; outcomes in the members' order. */
export async function landTrain(root: string, options: TrainOptions): Promise<MergeOutcome[]> {
  if (options.members.length === 0) return [];
  // A merge a killed process left in the checkout is settled before the tips are read (a held
  // one makes the advance wait: merge_in.ts).
  await settleInterruptedMerge(root, { signal: options.signal });
  return (await finishTrain(root, options, await prepareTrain(root, options))).outcomes;
}

/**
 * A train whose candidate merge commits are made and gated but not landed: nothing visible has
 * changed. `leaves` is the target's tip once it lands as prepared (its last candidate), so the
 * next train can be prepared on top of it meanwhile (merge.ts); undefined when a failed gate
 * means the members after it are merged again, from a tip not known yet.
 */
export interface PreparedTrain {
  /** The commit the chain starts on: the target's tip, or the tip the train before it leaves. */
  tip: CommitTree;
  chain: Candidate[];
  gates: GateResult[];
  /** The candidates that land (the chain up to its first failed gate). */
  landing: Candidate[];
  /** Members merged onto a failed candidate's work: merged again after the others land. */
  again: number[];
  /** Outcomes known already (conflicts, the failed gate); the others are set by the landing. */
  outcomes: MergeOutcome[];
  leaves: CommitTree | undefined;
  /** The entries the advance over `landing` changes, and those each of its merges changes. */
  changed: ChangedEntry[];
  each: ChangedEntry[][];
}

/**
 * Steps 1 and 2: chain the members' merges onto `onto` (default: the target's tip, read now) in
 * the object store and evaluate each candidate's gates on its own tree. Changes no ref.
 */
export async function prepareTrain(
  root: string,
  options: TrainOptions,
  onto?: CommitTree,
): Promise<PreparedTrain> {
  const { target, members, signal } = options;
  const outcomes: MergeOutcome[] = new Array(members.length);
  const { tips, unchanged } = await resolveMembers(root, target, members, signal);
  const tip = onto ?? tips.target;
  const chain: Candidate[] = [];
  let parent = tip;
  // Merge commits made ahead, in one process, by the member's index (merge_chain.ts); a member
  // at or before `triedUpTo` that has none is made one step at a time.
  const chained = new Map<number, CommitTree>();
  let triedUpTo = -1;
  for (const [index, member] of members.entries()) {
    // Its work changes nothing (an empty diff from its base): its gates run on the tree as it
    // is, and there is nothing to land — no merge commit to make, nor one to name as its own.
    if (unchanged[index]) {
      chain.push({ index, parent, commit: parent.commit, tree: parent.tree, unchanged: true });
      continue;
    }
    if (index > triedUpTo) {
      const ahead = await chainAhead(root, { members, agents: tips.agents, unchanged }, index, {
        parent,
        signal,
      });
      ahead.forEach((made, k) => chained.set(index + k, made));
      triedUpTo = index + ahead.length;
    }
    const made = chained.get(index);
    if (made) {
      noteCommit(root, made.commit, [parent.commit, tips.agents[index]]);
      chain.push({ index, parent, ...made });
      parent = made;
      continue;
    }
    const merged = await mergeOnto(root, parent, tips.agents[index], { signal });
    if (merged.kind === "conflict") {
      outcomes[index] = { status: "conflict", files: merged.files };
      continue;
    }
    const commit = merged.up_to_date
      ? parent.commit
      : await commitTree(root, merged.tree, [parent.commit, tips.agents[index]], member, signal);
    chain.push({ index, parent, commit, tree: merged.tree });
    parent = { commit, tree: merged.tree };
  }
  const gates = await evaluateChain(root, chain, options);
  const failed = chain.findIndex((_, i) => !gates[i].passed);
  const landing = failed < 0 ? chain : chain.slice(0, failed);
  // Members after a failed candidate were merged onto its work: they are merged again.
  const again = failed < 0 ? [] : members.map((_, i) => i).filter((i) => i > chain[failed].index);
  if (failed >= 0) {
    const c = chain[failed];
    outcomes[c.index] = { status: "gates_failed", gates: gates[failed], tree: c.tree };
  }
  const last = landing.at(-1);
  const leaves = again.length > 0
    ? undefined
    : last
    ? { commit: last.commit, tree: last.tree }
    : tip;
  // What the advance changes and what each merge changes, listed now: not while the target waits.
  const [changed = [], ...each] = last
    ? await changedEntries(root, [
      [tip.tree, last.tree],
      ...landing.map((c) => [c.parent.tree, c.tree] as const),
    ], { signal })
    : [];
  // The links of the last candidate's tree follow from its base's and this listing: the tasks
  // cut from it once it lands need no `ls-tree` of it (lib/git/tree_links.ts).
  if (last) noteTreeChange(tip.commit, last.commit, changed);
  return { tip, chain, gates, landing, again, outcomes, leaves, changed, each };
}

/**
 * Step 3 of a prepared train: advance the target from `prepared.tip` over its candidates (a
 * compare-and-swap: a target that moved meanwhile makes each land alone, from the new tip), then
 * merge again the members a failed gate held back. `left` is the tip the target was advanced
 * to when it landed exactly as prepared (undefined otherwise).
 */
export async function finishTrain(
  root: string,
  options: TrainOptions,
  prepared: PreparedTrain,
): Promise<{ outcomes: MergeOutcome[]; left: CommitTree | undefined }> {
  const { members } = options;
  const outcomes = [...prepared.outcomes];
  const { landing, again } = prepared;
  const gates = landing.map((_, i) => prepared.gates[i]);
  const landed = await landCandidates(root, options, prepared, gates, outcomes);
  if (again.length > 0) {
    const rest = await landTrain(root, { ...options, members: again.map((i) => members[i]) });
    again.forEach((i, j) => outcomes[i] = rest[j]);
  }
  return { outcomes, left: landed ? prepared.leaves : undefined };
}

/**
 * Advance the target over `landing` at once; when it cannot, land them one by one. True when the
 * target was advanced over all of them at once (or there was nothing to advance).
 */
async function landCandidates(
  root: string,
  options: TrainOptions,
  prepared: PreparedTrain,
  gates: GateResult[],
  outcomes: MergeOutcome[],
): Promise<boolean> {
  const { tip, landing, changed: all, each } = prepared;
  if (landing.length === 0) return true;
  const last = landing[landing.length - 1];
  const landed = last.commit === tip.commit ? { landed: true as const } : await advanceTarget(
    root,
    {
      target: options.target,
      oldTip: tip.commit,
      newTip: last.commit,
      changed: all.map((e) => e.path),
      entries: all,
      message: reflogMessage(options, landing.filter((c) => !c.unchanged)),
      signal: options.signal,
    },
  );
  if (landed.landed) {
    landing.forEach((c, i) => {
      outcomes[c.index] = c.unchanged ? { status: "unchanged", gates: gates[i], tree: c.tree } : {
        status: "merged",
        commit: c.commit,
        tree: c.tree,
        changed_files: each[i].map((e) => e.path),
        gates: gates[i],
      };
    });
    return true;
  }
  if (landing.length === 1) {
    const { reason, files, stuck } = landed;
    outcomes[last.index] = {
      status: "waiting",
      reason,
      files,
      stuck,
      gates: gates[0],
      tree: last.tree,
    };
    return false;
  }
  // One of them is in the way (or the target moved): each lands alone, reusing its gates when
  // its merge produces the same tree again.
  for (const [i, c] of landing.entries()) {
    const member = { ...options.members[c.index], evaluated: { tree: c.tree, gates: gates[i] } };
    [outcomes[c.index]] = await landTrain(root, { ...options, members: [member] });
  }
  return false;
}

/**
 * The target's tip, every member's commit, and which members' work is an empty diff from its
 * base (the same tree): in one `git rev-parse` when every name resolves, else asked apart so the
 * missing one is named (a base that no longer resolves only makes its member not `unchanged`).
 */
async function resolveMembers(
  root: string,
  target: string,
  members: readonly TrainMember[],
  signal: AbortSignal | undefined,
): Promise<{ tips: Tips; unchanged: boolean[] }> {
  const ref = targetRef(target);
  const based = members.flatMap((m, i) => m.base ? [{ i, base: m.base }] : []);
  const revs = [
    `${ref}^{commit}`,
    `${ref}^{tree}`,
    ...members.map((m) => `${m.agent}^{commit}`),
    ...based.flatMap(({ i, base }) => [`${members[i].agent}^{tree}`, `${base}^{tree}`]),
  ];
  const r = await git(["rev-parse", "--end-of-options", ...revs], {
    cwd: root,
    signal,
    allowFailure: true,
  });
  // Some versions of git echo `--end-of-options` (merge_tree.ts resolveTips).
  const lines = r.stdout.split("\n").filter((l) => l !== "" && l !== "--end-of-options");
  if (r.code !== 0 || lines.length !== revs.length || !lines.every((l) => OID.test(l))) {
    const tips = await resolveTips(root, target, members.map((m) => m.agent), { signal });
    const pairs = members.map((m, i) => m.base ? [tips.agents[i], m.base] as const : undefined);
    return { tips, unchanged: await sameTrees(root, pairs, signal) };
  }
  noteCommit(root, lines[0]); // git named it a commit (`^{commit}`)
  const n = members.length;
  const unchanged = members.map(() => false);
  based.forEach(({ i }, j) => unchanged[i] = lines[2 + n + 2 * j] === lines[3 + n + 2 * j]);
  return {
    tips: { target: { commit: lines[0], tree: lines[1] }, agents: lines.slice(2, 2 + n) },
    unchanged,
  };
}

const OID = /^[0-9a-f]{40,64}$/;

/**
 * For each pair of commits, true when both have the same tree (the diff between them is empty);
 * false for a pair that is absent or cannot be resolved. One `git rev-parse` for all of them.
 */
async function sameTrees(
  root: string,
  pairs: readonly (readonly [a: string, b: string] | undefined)[],
  signal: AbortSignal | undefined,
): Promise<boolean[]> {
  const asked = pairs.flatMap((p) => p ? [`${p[0]}^{tree}`, `${p[1]}^{tree}`] : []);
  if (asked.length === 0) return pairs.map(() => false);
  const out = await git(["rev-parse", "--end-of-options", ...asked], {
    cwd: root,
    signal,
    allowFailure: true,
  });
  // Some versions of git echo `--end-of-options` (merge_tree.ts resolveTips).
  const trees = out.stdout.split("\n").filter((l) => l !== "--end-of-options");
  if (out.code !== 0) {
    if (pairs.length === 1) return [false];
    // One of them does not resolve: each pair is asked alone, so the others keep their answer.
    return Promise.all(pairs.map((p) => p ? sameTrees(root, [p], signal).then(([x]) => x) : false));
  }
  let at = 0;
  return pairs.map((p) => {
    if (!p) return false;
    const [ta, tb] = [trees[at], trees[at + 1]];
    at += 2;
    return ta !== "" && ta !== undefined && ta === tb;
  });
}

/** The reflog message of an advance over `merging` (the members that change something). */
function reflogMessage(options: TrainOptions, merging: Candidate[]): string {
  const [first] = merging;
  return merging.length === 1
    ? `service: merge ${nameOf(options.members[first.index])} (task ${
      options.members[first.index].taskId
    })`
    : `service: merge ${merging.length} agent branches (tasks ${
      merging.map((c) => options.members[c.index].taskId).join(", ")
    })`;
}

/** The gates of each candidate, several at once; a tree evaluated before is not run again. */
function evaluateChain(
  root: string,
  chain: Candidate[],
  options: TrainOptions,
): Promise<GateResult[]> {
  const at = new Bounded(options.gateConcurrency ?? navigator.hardwareConcurrency);
  return Promise.all(chain.map((c) => {
    const member = options.members[c.index];
    if (member.evaluated?.tree === c.tree) {
      return Promise.resolve({ ...member.evaluated.gates, commit: c.commit });
    }
    return at.run(() =>
      evaluateGates(root, c.commit, member.gates ?? {}, {
        ...options.gateOptions,
        signal: options.signal,
      })
    );
  }));
}

/**
 * The merge commits of the members from `from` on, up to the next unchanged one, chained in one
 * process onto `parent` (merge_chain.ts): as many as merged plainly; the rest are made one step
 * at a time.
 */
async function chainAhead(
  root: string,
  train: { members: readonly TrainMember[]; agents: readonly string[]; unchanged: boolean[] },
  from: number,
  at: { parent: CommitTree; signal: AbortSignal | undefined },
): Promise<CommitTree[]> {
  const links: ChainLink[] = [];
  for (let i = from; i < train.members.length && !train.unchanged[i]; i++) {
    links.push({ agent: train.agents[i], message: mergeMessage(train.members[i]) });
  }
  if (links.length < 2) return [];
  return chainMerges(root, at.parent, links, {
    env: await commitIdentity(root),
    signal: at.signal,
  });
}

/** The message of `member`'s merge commit. */
function mergeMessage(member: TrainMember): string {
  return member.message ?? `service: merge ${nameOf(member)} (task ${member.taskId})`;
}

/** The candidate merge commit of `member`: `tree` with `parents`, unreferenced. */
async function commitTree(
  root: string,
  tree: string,
  parents: string[],
  member: TrainMember,
  signal: AbortSignal | undefined,
): Promise<string> {
  const args = [
    "commit-tree",
    tree,
    ...parents.flatMap((p) => ["-p", p]),
    "-m",
    mergeMessage(member),
  ];
  const commit = (await git(args, { cwd: root, signal, env: await commitIdentity(root) })).stdout
    .trim();
  noteCommit(root, commit, parents); // the reap then reads from the target's file that it landed
  return commit;
}
