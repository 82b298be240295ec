/**
 * `service doctor`'s look at `.sdd/worktrees/`: worktrees of tasks no run continues (cancelled,
 * failed or closed while nothing ran to reap them) and `.git/worktrees/<id>` entries a removal
 * cut short left. `service run` settles both before it starts (lib/worktrees/settle.ts).
 */
import type { CheckResult } from "../check_result.ts";
import { loadTaskSpecs } from "../tasks/persist.ts";
import { workspacePaths } from "../workspace.ts";
import { halfRemovedEntries, settledWorktrees, worktreeSessions } from "../worktrees/settle.ts";

/** A warning naming each leftover worktree and half-removed entry, or undefined when none. */
export async function checkLeftWorktrees(root: string): Promise<CheckResult | undefined> {
  const sessions = await worktreeSessions(root);
  const left = sessions.length === 0
    ? []
    : settledWorktrees(sessions, (await loadTaskSpecs(workspacePaths(root))).tasks);
  const half = await halfRemovedEntries(root).catch(() => []);
  if (left.length === 0 && half.length === 0) return undefined;
  const parts = [
    ...(left.length > 0
      ? [
        `${left.length} worktree(s) of tasks no run continues: ${
          left.map((l) => `.sdd/worktrees/${l.session_id} (${l.task_id}, ${l.status})`).join(", ")
        }`,
      ]
      : []),
    ...(half.length > 0
      ? [`${half.length} half-removed worktree entr(ies) without gitdir: ${half.join(", ")}`]
      : []),
  ];
  return {
    name: "worktrees",
    ok: true,
    warning: true,
    detail: parts.join("; "),
    fix: "`service run` reaps them before it starts, keeping unmerged work at " +
      "refs/service/rescue/<session> (listed here afterwards)",
  };
}
