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
  | "resumable";

/** One entry of `GET /review-board/runs`. */
export interface RunSummary {
  run_id: string;
  event_count: number;
  journal_head: string;
  journal_verified: boolean;
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
