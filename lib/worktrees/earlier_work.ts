/**
 * The work an interrupted session left (stopped, killed, timed out, lost with the orchestrator),
 * which the task's next attempt continues: found on the session's rescue ref, else its branch,
 * unless the target branch already holds it. The new session's worktree is cut at that work's
 * tip, and its diff is taken from the commit the interrupted session was cut from, so the work
 * of every attempt is reviewed and landed together.
 */
import { git, resolveCommit } from "../git/git.ts";
import { rescueRef } from "./reap.ts";
import { existsSync } from "node:fs";
import { agentBranch, worktreePath } from "./worktrees.ts";

/** Work to continue: its tip and the target commit it was cut from. */
export interface EarlierWork {
  commit: string;
  base: string;
}

/** The work `sessionId` left, unless `targetTip` already holds it (or nothing is left of it). */
export async function earlierWork(
  root: string,
  sessionId: string,
  targetTip: string,
): Promise<EarlierWork | undefined> {
  const o = { cwd: root };
  const commit = await resolveCommit(rescueRef(sessionId), o) ??
    await resolveCommit(`refs/heads/${agentBranch(sessionId)}`, o);
  if (commit === undefined) return undefined;
  const landed = await git(["merge-base", "--is-ancestor", commit, targetTip], {
    ...o,
    allowFailure: true,
  });
  if (landed.code === 0) return undefined;
  const base = await git(["merge-base", targetTip, commit], { ...o, allowFailure: true });
  if (base.code !== 0) return undefined; // unrelated history: nothing sensible to continue
  return { commit, base: base.stdout.trim() };
}

/**
 * A new session continues `sessionId`'s work (its branch holds that commit now): the rescue ref
 * and branch that kept it go, each only while it still points at `commit`, so `doctor` does not
 * report work as unmerged once its continuation lands.
 */
export async function supersedeEarlierWork(
  root: string,
  sessionId: string,
  commit: string,
): Promise<void> {
  const refs = [rescueRef(sessionId)];
  // A branch still checked out in a worktree (its reap failed) stays with it.
  if (!existsSync(worktreePath(root, sessionId))) refs.push(`refs/heads/${agentBranch(sessionId)}`);
  for (const ref of refs) {
    await git(["update-ref", "-d", ref, commit], { cwd: root, allowFailure: true });
  }
}

/**
 * True when `sessionId` left work to continue although its worktree directory is gone (removed
 * by hand after a stop): its commits are still on its rescue ref or branch, off the target.
 */
export async function keptWithoutWorktree(
  root: string,
  sessionId: string,
  targetTip: () => Promise<string>,
): Promise<boolean> {
  if (existsSync(worktreePath(root, sessionId))) return false;
  return await earlierWork(root, sessionId, await targetTip()) !== undefined;
}
