/**
 * Removing agent worktrees without ever losing work: a worktree goes only once its work is
 * committed and either merged into the target branch or kept at `refs/service/rescue/<session>`.
 */
import { gitWorktree } from "../git/worktree_admin.ts";
import { git, resolveCommit, targetRef } from "../git/git.ts";
import { knownToBeIn } from "../git/known_commits.ts";
import {
  agentBranch,
  cleanHead,
  commitPartialWork,
  requireSessionId,
  worktreePath,
} from "./worktrees.ts";
import { dropTreeRecord, openWorktree } from "./trees.ts";
import { removeWorktree } from "./remove_tree.ts";
import type { TreeDirs } from "../git/agent_tree.ts";
import { type BranchCheck, branchCheckLine, restoreDeletedBranch } from "./lost_branch.ts";

/** Why a worktree whose branch was deleted, with no commit to put it back at, is kept. */
function lostReason(check: Extract<BranchCheck, { kind: "lost" }>): string {
  return `its branch ${check.branch} was deleted by hand and no commit of it is known; copy what ` +
    `you need from ${check.worktree}, then \`git worktree remove --force ${check.worktree}\``;
}

/** Namespace of the refs that keep the work of reaped, unmerged sessions. */
const RESCUE_PREFIX = "refs/service/rescue/";

/** `refs/service/rescue/<session>`: where a reaped session's unmerged work is kept. */
export function rescueRef(sessionId: string): string {
  return RESCUE_PREFIX + requireSessionId(sessionId);
}

/** Options of {@link reapWorktree}. */
export interface ReapOptions {
  /** The branch work lands on (e.g. `main`). */
  target: string;
  /** Message of the commit of uncommitted leftovers. */
  message?: string;
  /** Delete `agent/<session>` when it is merged (default true). Unmerged branches are kept. */
  deleteMergedBranch?: boolean;
  /**
   * The work landed although its tip is not in the target's history: a host squashed or rebased
   * it while merging its pull request. It needs no rescue ref.
   */
  landed?: boolean;
  /**
   * Runs once the work is committed and kept (merged or on its rescue ref), before the worktree
   * is removed (the environment's teardown, DESIGN.md §13); what it leaves is not committed.
   */
  beforeRemove?: () => Promise<void>;
  signal?: AbortSignal;
  /** Told what of the worktree's git files had to be put back (lib/worktrees/trees.ts). */
  warn?: (line: string) => void;
}

/** What {@link reapWorktree} did. */
export interface ReapResult {
  /** True when the worktree directory and its registration are gone. */
  removed: boolean;
  /** True when the branch tip is contained in the target branch. */
  merged: boolean;
  /** The branch tip after committing leftovers (absent when the branch is gone). */
  tip?: string;
  /** True when leftovers were committed before removal. */
  committed_partial: boolean;
  /** The rescue ref written for unmerged work. */
  rescue_ref?: string;
  /** Why the worktree was kept (nothing was removed). */
  reason?: string;
}

/**
 * Reap the worktree of `sessionId`: commit leftovers to `agent/<session>`, then (after
 * `beforeRemove`) remove the worktree when the branch is merged into `options.target` or its tip
 * has been written to `refs/service/rescue/<session>`. When any step fails the worktree stays
 * and `reason` says why.
 */
export async function reapWorktree(
  root: string,
  sessionId: string,
  options: ReapOptions,
): Promise<ReapResult> {
  requireSessionId(sessionId);
  const path = worktreePath(root, sessionId);
  const branch = agentBranch(sessionId);
  const o = { cwd: root, signal: options.signal };
  const exists = await Deno.stat(path).then(() => true, () => false);
  let committed = false;
  try {
    // The work is the worktree's HEAD (an agent may have left the branch) or else the branch.
    let tip: string | undefined;
    let dirs: TreeDirs | undefined;
    if (exists) {
      // A branch deleted by hand is put back first: a commit on an unborn branch would hold the
      // whole tree as a history of its own. With nothing to put it back at, the worktree stays.
      const branchCheck = await restoreDeletedBranch(root, sessionId, { signal: options.signal });
      if (branchCheck.kind === "lost") {
        return {
          removed: false,
          merged: false,
          committed_partial: false,
          reason: lostReason(branchCheck),
        };
      }
      if (branchCheck.kind === "restored") options.warn?.(branchCheckLine(sessionId, branchCheck)!);
      // Its git files checked (and put back) once; every call there is hardened.
      const tree = await openWorktree(path, { signal: options.signal, warn: options.warn });
      dirs = tree.dirs;
      // Its work is usually committed already (captured): one look says so.
      tip = await cleanHead(path, { signal: options.signal, tree });
      if (tip === undefined) {
        const message = options.message ?? `service: partial work of session ${sessionId}`;
        // Its work began where it meets the target: ignored and copied files added since are
        // kept out of the commit the rescue ref keeps (lib/worktrees/keep_out.ts).
        const base = await tree.git(["merge-base", targetRef(options.target), "HEAD"], {
          signal: options.signal,
          allowFailure: true,
        }).catch(() => undefined);
        const work = await commitPartialWork(path, message, {
          signal: options.signal,
          root,
          tree,
          ...(base?.code === 0 ? { base: base.stdout.trim() } : {}),
        });
        committed = work.committed;
        tip = work.tip;
      }
    } else {
      tip = await resolveCommit(`refs/heads/${branch}`, o);
    }
    if (tip === undefined) {
      await gitWorktree(root, ["prune"], o);
      await dropTreeRecord(root, sessionId);
      return { removed: true, merged: false, committed_partial: false };
    }
    // Known without git when the target's tip, read from its file, is a merge commit this process
    // wrote that holds `tip` (lib/git/known_commits.ts); anything else is asked of git.
    const ref = targetRef(options.target);
    const merged = options.landed === true || await knownToBeIn(root, ref, tip) ||
      (await git(["merge-base", "--is-ancestor", tip, ref], { ...o, allowFailure: true }))
          .code === 0;
    let rescue: string | undefined;
    if (!merged) {
      rescue = rescueRef(sessionId);
      await git(["update-ref", "-m", `service: rescue ${branch}`, rescue, tip], o);
    }
    if (exists) await options.beforeRemove?.();
    // Removed as `git worktree remove --force` removes it, by the record's directories.
    if (dirs) await removeWorktree(root, dirs, options.signal);
    else await gitWorktree(root, ["prune"], o);
    await dropTreeRecord(root, sessionId);
    if (merged && (options.deleteMergedBranch ?? true)) {
      // Deleted only while it still points at the merged tip (a compare-and-swap): a branch the
      // agent moved elsewhere keeps what it holds.
      await git(["update-ref", "-d", `refs/heads/${branch}`, tip], { ...o, allowFailure: true });
    }
    return { removed: true, merged, tip, committed_partial: committed, rescue_ref: rescue };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return { removed: false, merged: false, committed_partial: committed, reason };
  }
}

/** One kept piece of unmerged work. */
export interface RescueRef {
  session_id: string;
  ref: string;
  commit: string;
  /** Committer date of the tip, ISO 8601. */
  committed_at: string;
  subject: string;
}

/** Every `refs/service/rescue/*` ref, for `doctor` (sorted by ref name). */
export async function listRescueRefs(root: string): Promise<RescueRef[]> {
  const format = "%(refname)%00%(objectname)%00%(committerdate:iso-strict)%00%(subject)";
  const out = await git(["for-each-ref", `--format=${format}`, RESCUE_PREFIX], { cwd: root });
  return out.stdout.split("\n").filter((l) => l !== "").map((line) => {
    const [ref, commit, committed_at, subject] = line.split("\0");
    return { session_id: ref.slice(RESCUE_PREFIX.length), ref, commit, committed_at, subject };
  });
}
