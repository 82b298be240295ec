/**
 * Rebasing an agent's branch onto the target's new tip, in the agent's worktree, when its merge
 * conflicted (issue: conflicts are resolved on the new base before a new attempt is spent). A
 * rebase replays the agent's commits one by one, so it succeeds where a three-way merge of the
 * whole branch does not when the target already holds part of the agent's change (its commit is
 * dropped as already applied). When a commit still conflicts, the rebase is aborted — nothing
 * changes — and the conflicting files and the change merged meanwhile are reported, for the
 * next attempt's prompt.
 */
import { commitIdentity } from "../git/git.ts";
import type { AgentTree } from "../git/agent_tree.ts";
import { openWorktree } from "../worktrees/trees.ts";

/** Input of {@link rebaseOnto}. */
export interface RebaseOptions {
  /** The agent's worktree (its branch is checked out there). */
  worktree: string;
  /** The commit the agent's work was cut from. */
  base: string;
  /** The target's current tip. */
  onto: string;
  /** The workspace root (for the commit identity). */
  root: string;
}

/** Outcome of {@link rebaseOnto}. */
export type RebaseOutcome =
  /** `tip`: the rebased branch's new head; `onto`: the base it now stands on. */
  | { kind: "rebased"; tip: string; onto: string; diffChanged: boolean }
  | { kind: "conflict"; files: string[]; otherChange: string };

/** Characters of the other change's diff kept for a prompt. */
const OTHER_CHANGE_CHARS = 4000;

async function patchId(tree: AgentTree, from: string, to: string): Promise<string> {
  const diff = await tree.git(["diff", "--binary", from, to]);
  if (diff.bytes.length === 0) return "";
  const id = await tree.git(["patch-id", "--stable"], { stdin: diff.bytes });
  return id.stdout.split(" ")[0] ?? "";
}

/**
 * Rebase the branch checked out in `options.worktree` from `base` onto `onto`, with the hardened
 * git of lib/worktrees/trees.ts (no hook, no filter or merge driver the tree's attributes pick).
 */
export async function rebaseOnto(options: RebaseOptions): Promise<RebaseOutcome> {
  const { base, onto } = options;
  const tree = await openWorktree(options.worktree);
  const before = await tree.text(["rev-parse", "HEAD"]);
  const patchBefore = await patchId(tree, base, before);
  const env = await commitIdentity(options.root);
  const r = await tree.git(["rebase", "--no-autosquash", "--onto", onto, base], {
    env,
    allowFailure: true,
  });
  if (r.code !== 0) {
    const unmerged = await tree.git(["diff", "--name-only", "--diff-filter=U", "-z"], {
      allowFailure: true,
    });
    const files = unmerged.stdout.split("\0").filter((f) => f.length > 0);
    await tree.git(["rebase", "--abort"], { allowFailure: true });
    const conflicted = files.length > 0 ? files : await changedOnBoth(tree, base, before, onto);
    return {
      kind: "conflict",
      files: conflicted,
      otherChange: await otherChange(tree, base, onto, conflicted),
    };
  }
  const tip = await tree.text(["rev-parse", "HEAD"]);
  return {
    kind: "rebased",
    tip,
    onto,
    diffChanged: (await patchId(tree, onto, tip)) !== patchBefore,
  };
}

/** Paths both sides changed since `base` (when git named no unmerged path). */
async function changedOnBoth(
  tree: AgentTree,
  base: string,
  ours: string,
  theirs: string,
): Promise<string[]> {
  const names = async (to: string) =>
    new Set(
      (await tree.git(["diff", "--name-only", "-z", base, to])).stdout.split("\0").filter(
        Boolean,
      ),
    );
  const a = await names(ours);
  return [...await names(theirs)].filter((f) => a.has(f)).sort();
}

/** The commits and diff that reached `onto` since `base` in `files`, shortened for a prompt. */
async function otherChange(
  tree: AgentTree,
  base: string,
  onto: string,
  files: string[],
): Promise<string> {
  if (files.length === 0) return "";
  const log = await tree.git(["log", "--format=%h %s", `${base}..${onto}`, "--", ...files], {
    allowFailure: true,
  });
  const diff = await tree.git(["diff", base, onto, "--", ...files], { allowFailure: true });
  const text = `${log.stdout.trim()}\n${diff.stdout}`;
  return text.length > OTHER_CHANGE_CHARS
    ? text.slice(0, OTHER_CHANGE_CHARS) + "\n… (shortened)"
    : text;
}
