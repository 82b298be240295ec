/**
 * Crash drills (docs/merging.md "Crash drills"): the steps of a merge that reach the user's
 * checkout, the journal and the task store are named, so that a test can end the process right
 * after any one of them, exactly as `kill -9` would, and prove that `service run` resumes from
 * there. Two ways in, both for tests only:
 *
 * - `SERVICE_CRASH_AT=<point>` in the environment of `service run`: the process sends itself
 *   SIGKILL right after that step (read once, when this module loads);
 * - {@link setCrashHook} in a test's own process: the hook is awaited at every point (it may fill
 *   a disk, or wait for the test to look).
 *
 * Without either, a point costs one comparison.
 */

/** The named steps, in the order a merge passes them (lib/merge/merge_in.ts, the run loop's store change). */
export const CRASH_POINTS = [
  /** The merge's intent is durable; the checkout is untouched. */
  "merge.intent_recorded",
  /** Index and working tree hold the merge; the branch has not moved. */
  "merge.checkout_updated",
  /** The branch points at the merge commit; the intent is still recorded. */
  "merge.ref_moved",
  /** The intent is cleared: the merge is complete in git. */
  "merge.intent_cleared",
  /** `task_merged` is durable in the journal; the task store still says DONE. */
  "merge.journaled",
  /** The task store says CLOSED; the worktree is not reaped yet. */
  "merge.store_closed",
  /**
   * The reap's removal is half done (lib/worktrees/remove_tree.ts): the worktree's directory and
   * its entry's `gitdir` are gone, the rest of `.git/worktrees/<id>` is still there.
   */
  "reap.tree_removed",
] as const;

/** One named step. */
export type CrashPoint = typeof CRASH_POINTS[number];

/** What a test runs at each point. */
export type CrashHook = (point: CrashPoint) => void | Promise<void>;

function fromEnvironment(): CrashPoint | undefined {
  let value: string | undefined;
  try {
    value = Deno.env.get("SERVICE_CRASH_AT");
  } catch {
    return undefined; // no permission to read the environment: no drill
  }
  if (!value) return undefined;
  if (!(CRASH_POINTS as readonly string[]).includes(value)) {
    console.error(
      `SERVICE_CRASH_AT=${value} names no crash point; known: ${CRASH_POINTS.join(", ")}`,
    );
    return undefined;
  }
  return value as CrashPoint;
}

const crashAt = fromEnvironment();
let hook: CrashHook | undefined;

/** Set (or, with undefined, clear) the hook awaited at every crash point of this process. */
export function setCrashHook(next: CrashHook | undefined): void {
  hook = next;
}

/** Mark that `point` was passed: end the process when a drill asks for it, else run the hook. */
export async function crashPoint(point: CrashPoint): Promise<void> {
  if (point === crashAt) Deno.kill(Deno.pid, "SIGKILL");
  if (hook) await hook(point);
}
