/**
 * What a card on the page shows (browser-safe, pure): the projection's card cut to the task's
 * current attempt, plus what the columns alone cannot say — the attempt's number, a FAILED or
 * CANCELLED task the fold keeps in its column, a completion that changed nothing (no changes,
 * nothing merged: it stays under needs review), why a task waits, an evidence bundle that no
 * longer verifies. The projection keeps a card's last gates and verdict across a retry
 * (DESIGN.md §5); the page leaves those of earlier attempts to the task detail's history and
 * never changes the projection itself.
 */
import type { Card } from "../board/types.ts";
import type {
  BatchTry,
  OutlineTask,
  OversizedFiles,
  OwnedFilesExceeded,
} from "../board/activity_types.ts";
import type { EvidenceMark } from "../review/types.ts";

/** Where a task stands when its column does not say it. */
export type Standing =
  | { state: "failed" | "cancelled" | "blocked" | "waiting" | "unchanged"; reason?: string }
  | undefined;

/** A card as shown. */
export interface CardFace {
  /** The projection's card without gates or verdict of earlier attempts. */
  card: Card;
  /** The current attempt's number (absent before the first claim). */
  attempt?: number;
  /** Gates or a verdict of earlier attempts were left out (they are in the task detail). */
  history: boolean;
  standing: Standing;
  /** Present when the task sealed an evidence bundle. */
  evidence?: EvidenceMark;
  /** Where the current attempt's agent runs or ran (`worktree`, `container:<runtime>:<id>`). */
  isolation?: string;
  /** The current attempt is a request to a provider's batch API (the card says "batch"). */
  batch?: BatchTry;
  /**
   * The current attempt's diff touches protected paths: it lands only on an operator's merge
   * (DESIGN.md §18); `error` when its paths could not be read.
   */
  guarded?: { paths: string[]; error?: string };
  /**
   * The current attempt's diff adds or grows files over `max_landed_file_mb`: it lands only on
   * an operator's merge (DESIGN.md §18).
   */
  oversized?: OversizedFiles;
  /** The current attempt's diff left the task's owned_files (refused when `enforced`). */
  ownedExceeded?: OwnedFilesExceeded;
}

const STANDING_STATES = new Set(["failed", "cancelled", "blocked", "waiting", "unchanged"]);

/**
 * The face of `card`: its diff and gates only when captured or failed after the current
 * attempt began, its verdict only when taken on the current attempt's work. Without the task's
 * outline entry the card is shown as projected.
 */
export function cardFace(card: Card, task?: OutlineTask, evidence?: EvidenceMark): CardFace {
  const since = task?.current_since;
  const shown: Card = { ...card };
  let history = false;
  if (since !== undefined) {
    if (shown.diff && task?.diff_index !== undefined && task.diff_index < since) {
      delete shown.diff;
      history = true;
    }
    if (shown.gates && !(task?.gated_index !== undefined && task.gated_index > since)) {
      delete shown.gates;
      history = true;
    }
    if (shown.verdict && shown.verdict.index < since) {
      delete shown.verdict;
      history = true;
    }
  }
  const standing: Standing = task && STANDING_STATES.has(task.state)
    ? { state: task.state as NonNullable<Standing>["state"], reason: task.reason }
    : undefined;
  return {
    card: shown,
    attempt: task && task.attempts > 0 ? task.attempts : undefined,
    history,
    standing,
    evidence,
    ...(task?.isolation ? { isolation: task.isolation } : {}),
    ...(task?.batch ? { batch: task.batch } : {}),
    ...(task?.protected_paths?.length || task?.protected_error
      ? {
        guarded: {
          paths: task.protected_paths ?? [],
          ...(task.protected_error ? { error: task.protected_error } : {}),
        },
      }
      : {}),
    ...(task?.oversized_files ? { oversized: task.oversized_files } : {}),
    ...(task?.owned_files_exceeded ? { ownedExceeded: task.owned_files_exceeded } : {}),
  };
}
