/**
 * The board as the JSON API serves it (DESIGN.md §5): its columns, cards and the projection
 * receipt. Types and two constant lists only, importing nothing but lib/json.ts, so the browser
 * bundle names them without reaching the journal (lib/import_graph_test.ts keeps it so).
 */
import type { JsonValue } from "../json.ts";

/** The five columns, in display order. */
export const COLUMNS = ["queued", "running", "gated", "needs_review", "merged"] as const;
/** A board column name. */
export type Column = typeof COLUMNS[number];

/** Review decisions an operator can take (spec §2.6). */
export const DECISIONS = ["approve", "request_changes", "merge"] as const;
/** A review decision. */
export type Decision = typeof DECISIONS[number];

/** Diff summary attached to a card. */
export interface CardDiff {
  sha256: string;
  added: number;
  removed: number;
  files: number;
}

/** Operator verdict attached to a card. */
export interface CardVerdict {
  decision: Decision;
  principal: string;
  index: number;
  note?: string;
}

/** A card as it appears on the board; optional keys are absent, never null. */
export interface Card {
  task_id: string;
  last_index: number;
  title?: string;
  role?: string;
  diff?: CardDiff;
  gates?: JsonValue[];
  verdict?: CardVerdict;
}

/** The board (DESIGN.md §5). */
export interface Board {
  schema_version: 1;
  run: { started: JsonValue | null; completed: JsonValue | null };
  event_count: number;
  columns: Record<Column, Card[]>;
}

/** The response of `GET /review-board/runs/<run_id>`. */
export interface ProjectionReceipt {
  run_id: string;
  board: Board;
  projection_hash: string;
  journal_head: string;
  journal_verified: boolean;
  event_count: number;
}
