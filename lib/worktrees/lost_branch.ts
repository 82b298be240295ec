/**
 * An agent worktree whose branch `agent/<session>` was deleted by hand (`git update-ref -d`, or
 * `git branch -D` once git let it) while no agent ran there: its HEAD names a branch that is gone,
 * so git sees an unborn branch — a commit there would start a history of its own holding the whole
 * tree, and a resume would find "no work" although the worktree still holds it. The branch is put
 * back at the last commit the worktree's own HEAD log names (git keeps that log when the branch
 * and its log go), so what the worktree holds is work on top of that commit again. With no such
 * commit the worktree is left untouched and the caller says so with the fix.
 */
import { join } from "node:path";
import { git, resolveCommit } from "../git/git.ts";
import { OID } from "../git/ref_files.ts";
import { treeRecordOf } from "./trees.ts";
import { agentBranch, worktreePath } from "./worktrees.ts";
import { pathExists } from "../util/path_exists.ts";

/** What {@link restoreDeletedBranch} found: the branch is there, put back, or lost for good. */
export type BranchCheck =
  | { kind: "present" }
  | { kind: "restored"; branch: string; commit: string }
  | { kind: "lost"; branch: string; worktree: string };

const ZERO_OID = /^0+$/;

/** The last commit a HEAD log names (its last line's new value), if the log has one. */
export function lastLoggedCommit(log: string): string | undefined {
  for (const line of log.split("\n").reverse()) {
    const next = line.split(" ")[1];
    if (next && OID.test(next) && !ZERO_OID.test(next)) return next;
  }
  return undefined;
}

/**
 * Put back `agent/<session>` when its worktree is there but the branch is gone (see the module
 * comment). Created only while absent (`update-ref` with an empty old value): never moves a branch.
 */
export async function restoreDeletedBranch(
  root: string,
  sessionId: string,
  options: { signal?: AbortSignal } = {},
): Promise<BranchCheck> {
  const worktree = worktreePath(root, sessionId);
  const ref = `refs/heads/${agentBranch(sessionId)}`;
  const o = { cwd: root, signal: options.signal };
  if (!await pathExists(worktree)) return { kind: "present" };
  const record = await treeRecordOf(worktree);
  if (record.head !== `ref: ${ref}`) return { kind: "present" }; // detached by the service: no branch
  // Every reap asks: its loose ref file answers without a git process; a packed one asks git.
  if (await pathExists(join(record.common_dir, ref)) || await resolveCommit(ref, o)) {
    return { kind: "present" };
  }
  const log = await Deno.readTextFile(join(record.admin_dir, "logs", "HEAD")).catch(() => "");
  const logged = lastLoggedCommit(log);
  const commit = logged ? await resolveCommit(logged, o) : undefined;
  if (!commit) return { kind: "lost", branch: agentBranch(sessionId), worktree };
  await git([
    "update-ref",
    "-m",
    "service: put back after it was deleted by hand",
    ref,
    commit,
    "",
  ], o);
  return { kind: "restored", branch: agentBranch(sessionId), commit };
}

/** The line that says what {@link restoreDeletedBranch} did, for `taskId`; none when present. */
export function branchCheckLine(taskId: string, check: BranchCheck): string | undefined {
  switch (check.kind) {
    case "present":
      return undefined;
    case "restored":
      return `${taskId}: its branch ${check.branch} was deleted by hand; put back at ` +
        `${
          check.commit.slice(0, 10)
        } (its worktree's last commit), so the work in its worktree is kept`;
    case "lost":
      return `${taskId}: its branch ${check.branch} was deleted by hand and no commit of its ` +
        `worktree is known; its worktree ${check.worktree} is left as it is — copy what you need ` +
        `from it, then \`git worktree remove --force ${check.worktree}\``;
  }
}
