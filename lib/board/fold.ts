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
import {
  type Board,
  type Card,
  type CardDiff,
  type CardVerdict,
  type Column,
  COLUMNS,
  type Decision,
  DECISIONS,
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

const isInt = (v: unknown): v is number => Number.isSafeInteger(v);
const isStr = (v: unknown): v is string => typeof v === "string";

// Values copied verbatim into the board must have a canonical form, or the board could not
// be hashed; a row carrying anything else is not folded into that part of the board.
function isJsonSafe(value: unknown): value is JsonValue {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isSafeInteger(value);
    case "object":
      if (value === null) return true;
      if (Array.isArray(value)) return value.every(isJsonSafe);
      return Object.values(value).every(isJsonSafe);
    default:
      return false;
  }
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
 * further). Keep in step with the switch below; lib/board/fold_test.ts folds a journal of every
 * kind both ways and compares.
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

/** Fold one row found at 0-based line `index` into `state`. Unknown types are ignored. */
export function foldRow(state: FoldState, row: JournalEvent, index: number): void {
  state.eventCount++;
  const data = row.data as Record<string, unknown>;
  switch (row.type) {
    case "run_started":
      if (state.started === null && isJsonSafe(data)) state.started = data;
      return;
    case "run_completed":
      if (isJsonSafe(data)) state.completed = data;
      return;
  }
  const taskId = data.task_id;
  if (!isStr(taskId)) return;
  switch (row.type) {
    case "task_claimed": {
      const { card } = move(state, taskId, "running", index);
      if (isStr(data.title)) card.title = data.title;
      if (isStr(data.role)) card.role = data.role;
      return;
    }
    case "task_verification_failed": {
      const { card } = move(state, taskId, "gated", index);
      if (Array.isArray(data.signals) && isJsonSafe(data.signals)) card.gates = data.signals;
      return;
    }
    case "task_retried":
      move(state, taskId, "queued", index);
      return;
    case "task_completed":
      move(state, taskId, "needs_review", index);
      return;
    case "task_merged":
      move(state, taskId, "merged", index);
      return;
    case "task_diff_captured": {
      const { sha256, added, removed, files } = data;
      if (!isStr(sha256) || !isInt(added) || !isInt(removed) || !isInt(files)) return;
      const diff = { sha256, added, removed, files };
      state.diffs.set(taskId, diff);
      const entry = state.cards.get(taskId);
      if (entry) entry.card.diff = { ...diff };
      return;
    }
    case "task_review_decision": {
      const decision = data.decision as Decision;
      if (!DECISIONS.includes(decision) || !isStr(data.principal)) return;
      const entry = decision === "merge"
        ? move(state, taskId, "merged", index)
        : state.cards.get(taskId);
      const verdict: CardVerdict = { decision, principal: data.principal, index };
      if (isStr(data.note)) verdict.note = data.note;
      if (entry) entry.card.verdict = verdict;
      return;
    }
  }
}

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
