/**
 * Rebasing an agent's branch onto the target's new tip, in the agent's worktree, when its merge
 * conflicted (issue: conflicts are resolved on the new base before a new attempt is spent). A
 * rebase replays the agent's commits one by one, so it succeeds where a three-way merge of the
 * whole branch does not when the target already holds part of the agent's change (its commit is
 * dropped as already applied). When a commit still conflicts, the rebase is aborted — nothing
 * changes — and the conflicting files and the change merged meanwhile are reported, for the
 * next attempt's prompt.
 */
import { commitIdentity, git } from "../git/git.ts";

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

async function patchId(cwd: string, from: string, to: string): Promise<string> {
  const diff = await git(["diff", "--binary", from, to], { cwd });
  if (diff.bytes.length === 0) return "";
  const id = await git(["patch-id", "--stable"], { cwd, stdin: diff.bytes });
  return id.stdout.split(" ")[0] ?? "";
}

/** Rebase the branch checked out in `options.worktree` from `base` onto `onto`. */
export async function rebaseOnto(options: RebaseOptions): Promise<RebaseOutcome> {
  const { worktree: cwd, base, onto } = options;
  const before = (await git(["rev-parse", "HEAD"], { cwd })).stdout.trim();
  const patchBefore = await patchId(cwd, base, before);
  const env = await commitIdentity(options.root);
  const r = await git(["rebase", "--no-autosquash", "--onto", onto, base], {
    cwd,
    env,
    allowFailure: true,
  });
  if (r.code !== 0) {
    const unmerged = await git(["diff", "--name-only", "--diff-filter=U", "-z"], {
      cwd,
      allowFailure: true,
    });
    const files = unmerged.stdout.split("\0").filter((f) => f.length > 0);
    await git(["rebase", "--abort"], { cwd, allowFailure: true });
    const conflicted = files.length > 0 ? files : await changedOnBoth(cwd, base, before, onto);
    return {
      kind: "conflict",
      files: conflicted,
      otherChange: await otherChange(cwd, base, onto, conflicted),
    };
  }
  const tip = (await git(["rev-parse", "HEAD"], { cwd })).stdout.trim();
  return {
    kind: "rebased",
    tip,
    onto,
    diffChanged: (await patchId(cwd, onto, tip)) !== patchBefore,
  };
}

/** Paths both sides changed since `base` (when git named no unmerged path). */
async function changedOnBoth(
  cwd: string,
  base: string,
  ours: string,
  theirs: string,
): Promise<string[]> {
  const names = async (to: string) =>
    new Set(
      (await git(["diff", "--name-only", "-z", base, to], { cwd })).stdout.split("\0").filter(
        Boolean,
      ),
    );
  const a = await names(ours);
  return [...await names(theirs)].filter((f) => a.has(f)).sort();
}

/** The commits and diff that reached `onto` since `base` in `files`, shortened for a prompt. */
async function otherChange(
  cwd: string,
  base: string,
  onto: string,
  files: string[],
): Promise<string> {
  if (files.length === 0) return "";
  const log = await git(["log", "--format=%h %s", `${base}..${onto}`, "--", ...files], {
    cwd,
    allowFailure: true,
  });
  const diff = await git(["diff", base, onto, "--", ...files], { cwd, allowFailure: true });
  const text = `${log.stdout.trim()}\n${diff.stdout}`;
  return text.length > OTHER_CHANGE_CHARS
    ? text.slice(0, OTHER_CHANGE_CHARS) + "\n… (shortened)"
    : text;
}
