/**
 * The intent of a merge into the user's checkout (land.ts), recorded durably before the checkout
 * is touched: the branch, the checkout, the commit it moves from and to, and every path the merge
 * changes with its exact entry (mode and blob) before and after. A process killed between the
 * checkout's update and the branch's move leaves the record behind, and the next landing proves
 * from it which staged changes are the service's own (interrupted.ts). Cleared once the branch
 * moved, or once the checkout is back as it was.
 */
import { git, type GitOptions, splitZ } from "../git/git.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { checkoutMergePath, workspacePaths } from "../workspace.ts";

/** A path's entry in a tree or the index: its mode and blob; null when the path is absent. */
export type Entry = { mode: string; oid: string } | null;

/** One path the merge changes: its entry before (`old`) and after (`new`). */
export interface IntentPath {
  path: string;
  old: Entry;
  new: Entry;
}

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

const ZERO = /^0+$/;

/** Every path that differs between two commits, with its entries in each (one `diff-tree`). */
export async function changedEntries(
  root: string,
  from: string,
  to: string,
  options: Omit<GitOptions, "cwd"> = {},
): Promise<IntentPath[]> {
  const out = await git(["diff-tree", "-r", "-z", "--no-renames", from, to], {
    ...options,
    cwd: root,
  });
  const fields = splitZ(out.stdout);
  const paths: IntentPath[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    // `:<old mode> <new mode> <old oid> <new oid> <status>`, then the path.
    const [oldMode, newMode, oldOid, newOid] = fields[i].slice(1).split(" ");
    paths.push({
      path: fields[i + 1],
      old: ZERO.test(oldMode) ? null : { mode: oldMode, oid: oldOid },
      new: ZERO.test(newMode) ? null : { mode: newMode, oid: newOid },
    });
  }
  return paths;
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
