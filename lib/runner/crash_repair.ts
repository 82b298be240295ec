/**
 * What `service run` puts right before it decides how to start, after an earlier run was killed
 * or starved of disk in the middle of a landing: a merge it left half done in the user's checkout
 * (lib/merge/interrupted.ts), and tasks the journal says landed while the store does not
 * (./store_repair.ts). Each repair — and each thing left alone — is one line for the terminal.
 */
import { settleInterruptedMerge } from "../merge/interrupted.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { repairStoreFromJournals } from "./store_repair.ts";
import { settleWorktrees } from "../worktrees/settle.ts";
import { liveAgentSessions } from "../agents/pid_files.ts";

/**
 * Settle an interrupted merge, reconcile the store with the journals, and reap the worktrees no
 * run continues (a cancel while nothing ran, a reap a kill cut short); the lines to print.
 */
export async function repairAfterCrash(
  paths: WorkspacePaths,
  store: TaskStore,
  target?: string,
): Promise<string[]> {
  const lines: string[] = [];
  const checkout = await settleInterruptedMerge(paths.root);
  if (checkout.kind === "settled") lines.push(`repaired: ${checkout.note}`);
  else if (checkout.kind === "held") lines.push(`merges wait: ${checkout.reason}`);
  lines.push(...await repairStoreFromJournals(paths, store));
  const trees = await settleWorktrees(paths.root, store.list(), {
    target,
    liveSessions: () => liveAgentSessions(paths),
  });
  lines.push(...trees.lines.map((l) => `worktrees: ${l}`));
  return lines;
}
