/**
 * The pure fold from journal rows to the review board (spec §3.2, DESIGN.md §5). It reads
 * `type` and `data` only — never `ts`, the host, the path or the run directory's name — so
 * the same rows give the same board, byte for byte, anywhere.
 */
import {
  canonicalJson,
  canonicalJsonOfOrdered,
  compareCodePoints,
  type JsonValue,
  stringifiesCanonically,
} from "../journal/canonical_json.ts";
import type { JournalEvent } from "../journal/row.ts";
import type { DataNeed } from "../journal/incremental.ts";
import { type EventType, readEvent, type ReadOf } from "../journal/event_reader.ts";
import {
  type Board,
  type Card,
  type CardDiff,
  type CardVerdict,
  type Column,
  COLUMNS,
} from "./types.ts";

interface CardState {
  card: Card;
  column: Column;
}

/** Mutable fold state; cheap to clone, turned into a board by {@link boardOf}. */
export interface FoldState {
  started: JsonValue | null;
  completed: JsonValue | null;
  eventCount: number;
  cards: Map<string, CardState>;
  /** Latest diff capture of every task, with or without a card (the diff endpoint reads it). */
  diffs: Map<string, CardDiff>;
}

/** The state before any row. */
export function initialFoldState(): FoldState {
  return {
    started: null,
    completed: null,
    eventCount: 0,
    cards: new Map(),
    diffs: new Map(),
  };
}

/** A deep copy of `state`. */
export function cloneFoldState(state: FoldState): FoldState {
  return structuredClone(state);
}

function move(state: FoldState, taskId: string, column: Column, index: number): CardState {
  let entry = state.cards.get(taskId);
  if (!entry) {
    entry = { card: { task_id: taskId, last_index: index }, column };
    state.cards.set(taskId, entry);
  }
  entry.column = column;
  entry.card.last_index = index;
  return entry;
}

/**
 * What {@link foldRow} reads of each row type's `data` (rows proven in bulk are parsed no
 * further). Keep in step with {@link FOLD} below (the readers of event_reader.ts need no more of
 * these rows than the key fields); lib/board/fold_test.ts folds a journal of every kind both
 * ways and compares.
 */
export function foldReads(type: string): DataNeed {
  switch (type) {
    case "task_retried":
    case "task_completed":
    case "task_merged":
      return "task_id";
    case "run_started":
    case "run_completed":
    case "task_claimed":
    case "task_verification_failed":
    case "task_diff_captured":
    case "task_review_decision":
      return "data";
    default:
      return "nothing";
  }
}

/**
 * Fold one row found at 0-based line `index` into `state`. Rows of unknown types, and rows that
 * count for nothing (lib/journal/event_reader.ts says which), change only the event count.
 */
export function foldRow(state: FoldState, row: JournalEvent, index: number): void {
  state.eventCount++;
  const event = readEvent(row);
  if (event) FOLD[event.type]?.(state, event as never, index);
}

/** What one event does to the board (spec §3.2); events the board does not read are absent. */
const FOLD: { [T in EventType]?: (state: FoldState, event: ReadOf<T>, index: number) => void } = {
  run_started(state, { data }) {
    if (state.started === null) state.started = data;
  },
  run_completed(state, { data }) {
    state.completed = data;
  },
  task_claimed(state, { task_id, title, role }, index) {
    const { card } = move(state, task_id, "running", index);
    if (title !== undefined) card.title = title;
    if (role !== undefined) card.role = role;
  },
  task_verification_failed(state, { task_id, signals }, index) {
    const { card } = move(state, task_id, "gated", index);
    if (signals) card.gates = signals;
  },
  task_retried(state, { task_id }, index) {
    move(state, task_id, "queued", index);
  },
  task_completed(state, { task_id }, index) {
    move(state, task_id, "needs_review", index);
  },
  task_merged(state, { task_id }, index) {
    move(state, task_id, "merged", index);
  },
  task_diff_captured(state, { task_id, sha256, added, removed, files }) {
    const diff = { sha256, added, removed, files };
    state.diffs.set(task_id, diff);
    const entry = state.cards.get(task_id);
    if (entry) entry.card.diff = { ...diff };
  },
  task_review_decision(state, { task_id, decision, principal, note }, index) {
    const entry = decision === "merge"
      ? move(state, task_id, "merged", index)
      : state.cards.get(task_id);
    const verdict: CardVerdict = { decision, principal, index };
    if (note !== undefined) verdict.note = note;
    if (entry) entry.card.verdict = verdict;
  },
};

function byLastIndexThenId(a: Card, b: Card): number {
  if (a.last_index !== b.last_index) return a.last_index - b.last_index;
  return compareCodePoints(a.task_id, b.task_id);
}

/**
 * The board of `state`: fresh objects, columns ordered by last transition then task id. Every
 * object is built with its keys in canonical (sorted) order, so its canonical JSON is one native
 * stringify (lib/journal/canonical_json.ts) — a 20 000-card board hashes in milliseconds.
 */
export function boardOf(state: FoldState): Board {
  const columns = { gated: [], merged: [], needs_review: [], queued: [], running: [] } as Record<
    Column,
    Card[]
  >;
  for (const { card, column } of state.cards.values()) {
    const copy = {} as Card;
    if (card.diff) copy.diff = diffOf(card.diff);
    if (card.gates) copy.gates = card.gates;
    copy.last_index = card.last_index;
    if (card.role !== undefined) copy.role = card.role;
    copy.task_id = card.task_id;
    if (card.title !== undefined) copy.title = card.title;
    if (card.verdict) copy.verdict = verdictOf(card.verdict);
    columns[column].push(copy);
  }
  for (const column of COLUMNS) columns[column].sort(byLastIndexThenId);
  return {
    columns,
    event_count: state.eventCount,
    run: { completed: state.completed, started: state.started },
    schema_version: 1,
  };
}

/**
 * Canonical JSON of a board made by {@link boardOf}. Its own objects are built in key order, so
 * only what was copied from rows (gates, the run's start and end) is checked; a 20 000-card
 * board then costs one native stringify.
 */
export function boardJson(board: Board): string {
  const copied: unknown[] = [board.run.started, board.run.completed];
  for (const column of COLUMNS) {
    for (const card of board.columns[column]) if (card.gates) copied.push(card.gates);
  }
  return copied.every(stringifiesCanonically)
    ? canonicalJsonOfOrdered(board)
    : canonicalJson(board);
}

function diffOf({ added, files, removed, sha256 }: CardDiff): CardDiff {
  return { added, files, removed, sha256 };
}

function verdictOf(verdict: CardVerdict): CardVerdict {
  const copy = { decision: verdict.decision, index: verdict.index } as CardVerdict;
  if (verdict.note !== undefined) copy.note = verdict.note;
  copy.principal = verdict.principal;
  return copy;
}

/** Fold a whole list of rows (each with its line index) into a board. */
export function foldBoard(rows: Iterable<{ index: number; row: JournalEvent }>): Board {
  const state = initialFoldState();
  for (const { index, row } of rows) foldRow(state, row, index);
  return boardOf(state);
}
