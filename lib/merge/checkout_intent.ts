/**
 * The intent of a merge into the user's checkout (merge_in.ts), recorded durably before the checkout
 * is touched: the branch, the checkout, the commit it moves from and to, and every path the merge
 * changes with its exact entry (mode and blob) before and after. A process killed between the
 * checkout's update and the branch's move leaves the record behind, and the next landing proves
 * from it which staged changes are the service's own (interrupted.ts). Cleared once the branch
 * moved, or once the checkout is back as it was.
 */
import { writeFileAtomic } from "../util/atomic_write.ts";
import { checkoutMergePath, workspacePaths } from "../workspace.ts";
import type { ChangedEntry, Entry } from "./merge_tree.ts";

export type { Entry };

/** One path the merge changes: its entry before (`old`) and after (`new`). */
export type IntentPath = ChangedEntry;

/** What a merge into a checkout is about to do. */
export interface CheckoutIntent {
  v: 1;
  /** The branch, e.g. `main`. */
  target: string;
  /** The checkout that has it checked out. */
  checkout: string;
  /** The branch's tip before, and the merge commit it moves to. */
  old_tip: string;
  new_tip: string;
  paths: IntentPath[];
  /** The process that merges (a live one is never second-guessed). */
  pid: number;
  /** The reflog message, which names the task(s). */
  message: string;
  /** ISO time it was recorded. */
  at: string;
}

/** The same entry (both absent, or the same mode and blob). */
export function sameEntry(a: Entry, b: Entry): boolean {
  return a === null ? b === null : b !== null && a.mode === b.mode && a.oid === b.oid;
}

/** Record `intent` for `root`'s workspace: durable before this resolves. */
export async function recordIntent(root: string, intent: CheckoutIntent): Promise<void> {
  await writeFileAtomic(
    checkoutMergePath(workspacePaths(root)),
    JSON.stringify(intent, null, 1) + "\n",
  );
}

/** The recorded intent, if any; a record that does not parse is said so (it is never guessed at). */
export async function readIntent(
  root: string,
): Promise<{ intent?: CheckoutIntent; problem?: string }> {
  const path = checkoutMergePath(workspacePaths(root));
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return {};
    throw e;
  }
  try {
    const intent = JSON.parse(text) as CheckoutIntent;
    if (intent?.v !== 1 || !Array.isArray(intent.paths) || typeof intent.old_tip !== "string") {
      return { problem: `${path} is not a merge intent this service wrote` };
    }
    return { intent };
  } catch (e) {
    return { problem: `${path} does not parse (${(e as Error).message})` };
  }
}

/** Clear the record (the merge is complete, or undone). */
export async function clearIntent(root: string): Promise<void> {
  await Deno.remove(checkoutMergePath(workspacePaths(root))).catch((e) => {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  });
}
