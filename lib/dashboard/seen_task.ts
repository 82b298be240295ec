/**
 * What the operator has seen of the task on screen, for the `If-Match` of a review (docs/board.md
 * "Review actions"). The page refreshes live, so the board on screen is usually newer than the
 * one the operator read: a change elsewhere on the board leaves the task as they saw it, but a
 * change to the task itself (a new diff, verdict, attempt or column) is not seen until they say
 * so. Until then a review names the board from before the change, and the server answers 412.
 */

/** The selected task as one board shows it. */
export interface ShownTask {
  /** The task (with its run, `<run_id>/<task_id>`). */
  taskId: string;
  /** `projection_hash` of the board. */
  hash: string;
  /** The task's card and column on that board ({@link cardKey}). */
  card: string;
}

/** A fingerprint of what the board says about one task: its column and its card's every field. */
export function cardKey(column: string | undefined, card: unknown): string {
  return JSON.stringify([column ?? null, card ?? null]);
}

/**
 * What the operator has seen once `shown` is on screen, given what they had seen before: the new
 * board when the task is new to them, the board is the one they saw (their own review's answer),
 * or the task reads the same on it; else what they had seen.
 */
export function seenAfter(seen: ShownTask | undefined, shown: ShownTask): ShownTask {
  if (!seen || seen.taskId !== shown.taskId) return shown;
  if (seen.hash === shown.hash || seen.card === shown.card) return shown;
  return seen;
}

/** True when the task on screen is not the one the operator saw. */
export function changedSinceSeen(seen: ShownTask, shown: ShownTask): boolean {
  return seen.taskId === shown.taskId && seen.hash !== shown.hash && seen.card !== shown.card;
}
