/**
 * A run as `GET /review-board/runs` lists it. Types only, importing nothing but lib/json.ts, so
 * the browser bundle's run picker names them without reaching the journal
 * (lib/import_graph_test.ts keeps it so).
 */
import type { JsonValue } from "../json.ts";

/** How a run stands (`service runs`, `GET /review-board/runs`, `service status`). */
export type RunStatus =
  | "running"
  | "completed"
  | "failed"
  | "stopped"
  | "interrupted"
  | "resumable"
  /** Its journal does not verify: it cannot be resumed, and its rows are not taken at their word. */
  | "unverified";

/** One entry of `GET /review-board/runs`. */
export interface RunSummary {
  run_id: string;
  event_count: number;
  journal_head: string;
  journal_verified: boolean;
  /** Where and how the journal does not verify; absent when it verifies. */
  journal_damage?: JournalDamage;
  started: JsonValue | null;
  completed: JsonValue | null;
  /** How the run stands now (lib/runs/trail.ts: recomputed after a cancel or retry). */
  status: RunStatus;
  /** Cards per board column. */
  counts: Record<string, number>;
  /** Tasks that ended FAILED, and CANCELLED (the board keeps their cards in `gated`). */
  failed: number;
  cancelled: number;
}

/**
 * Why a run's journal does not verify (lib/runs/journal_damage.ts): the kind of fault, the 1-based
 * line where the chain breaks (0 when the file is missing), how many lines before it verify, and
 * the words every view shows.
 */
export interface JournalDamage {
  kind: "torn_tail" | "unparseable" | "shape" | "seq" | "prev" | "hash" | "empty" | "missing";
  line: number;
  verified_lines: number;
  words: string;
}
