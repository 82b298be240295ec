/**
 * The pure fold from journal rows to the review board (spec §3.2, DESIGN.md §5). It reads
 * `type` and `data` only — never `ts`, the host, the path or the run directory's name — so
 * the same rows give the same board, byte for byte, anywhere.
 */
import { compareCodePoints, type JsonValue } from "../journal/canonical_json.ts";
import type { JournalEvent } from "../journal/row.ts";
import type { DataNeed } from "../journal/incremental.ts";
import { type EventType, readEvent, type ReadOf } from "../journal/event_reader.ts";
import { CardTable, FLAG, TEXT } from "./card_table.ts";
import {
  type Board,
  type Card,
  type CardDiff,
  type CardVerdict,
  type Column,
  COLUMNS,
} from "./types.ts";

/** Mutable fold state; cloned for a peek at a torn tail, turned into a board by {@link boardOf}. */
export interface FoldState {
  started: JsonValue | null;
  completed: JsonValue | null;
  eventCount: number;
  /** The slot in {@link table} of every task a row named that the board reads, by task id. */
  slots: Map<string, number>;
  /** Task id of each slot. */
  ids: string[];
  /** The cards and the latest diff capture of every task, with or without a card (./card_table.ts). */
  table: CardTable;
  /** Gates of the cards that have them, verbatim from their rows, by slot. */
  gates: Map<number, JsonValue[]>;
  /** Verdicts of the cards that have them, by slot. */
  verdicts: Map<number, CardVerdict>;
}

/** The state before any row. */
export function initialFoldState(): FoldState {
  return {
    started: null,
    completed: null,
    eventCount: 0,
    slots: new Map(),
    ids: [],
    table: new CardTable(),
    gates: new Map(),
    verdicts: new Map(),
  };
}

/** A deep copy of `state`. */
export function cloneFoldState(state: FoldState): FoldState {
  return {
    started: structuredClone(state.started),
    completed: structuredClone(state.completed),
    eventCount: state.eventCount,
    slots: new Map(state.slots),
    ids: [...state.ids],
    table: state.table.clone(),
    gates: structuredClone(state.gates),
    verdicts: structuredClone(state.verdicts),
  };
}

function slotOf(state: FoldState, taskId: string): number {
  let slot = state.slots.get(taskId);
  if (slot === undefined) {
    slot = state.table.add();
    state.slots.set(taskId, slot);
    state.ids.push(taskId);
  }
  return slot;
}

/** The slot of `taskId`'s card, if it has one. */
function cardSlot(state: FoldState, taskId: string): number | undefined {
  const slot = state.slots.get(taskId);
  return slot !== undefined && state.table.column[slot] !== NO_CARD ? slot : undefined;
}

const NO_CARD = 0;

function move(state: FoldState, taskId: string, column: Column, index: number): number {
  const slot = slotOf(state, taskId);
  state.table.column[slot] = COLUMNS.indexOf(column) + 1;
  state.table.lastIndex[slot] = index;
  return slot;
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
    const slot = move(state, task_id, "running", index);
    const table = state.table;
    if (title !== undefined) {
      table.setText(slot, TEXT.title, title);
      table.flags[slot] |= FLAG.title;
    }
    if (role !== undefined) {
      table.setText(slot, TEXT.role, role);
      table.flags[slot] |= FLAG.role;
    }
  },
  task_verification_failed(state, { task_id, signals }, index) {
    const slot = move(state, task_id, "gated", index);
    if (signals) {
      state.gates.set(slot, signals);
      state.table.flags[slot] |= FLAG.gates;
    }
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
  task_diff_captured(state, diff) {
    const slot = slotOf(state, diff.task_id);
    const table = state.table;
    table.setText(slot, TEXT.diffSha, diff.sha256);
    table.setDiffNumbers(slot, diff);
    // A card shows the capture only if it existed when the capture came (then it is the latest).
    table.flags[slot] |= table.column[slot] !== NO_CARD ? FLAG.diff | FLAG.cardDiff : FLAG.diff;
  },
  task_review_decision(state, { task_id, decision, principal, note }, index) {
    const slot = decision === "merge"
      ? move(state, task_id, "merged", index)
      : cardSlot(state, task_id);
    if (slot === undefined) return;
    const verdict = { decision, index } as CardVerdict;
    if (note !== undefined) verdict.note = note;
    verdict.principal = principal;
    state.verdicts.set(slot, verdict);
    state.table.flags[slot] |= FLAG.verdict;
  },
};

/** The latest diff capture of `taskId`, with or without a card (the diff endpoint reads it). */
export function latestDiff(state: FoldState, taskId: string): CardDiff | undefined {
  const slot = state.slots.get(taskId);
  if (slot === undefined || !(state.table.flags[slot] & FLAG.diff)) return undefined;
  return diffAt(state.table, slot);
}

function diffAt(table: CardTable, slot: number): CardDiff {
  const d = slot * 3;
  return {
    added: table.diffNumbers[d],
    files: table.diffNumbers[d + 2],
    removed: table.diffNumbers[d + 1],
    sha256: table.textOf(slot, TEXT.diffSha),
  };
}

/**
 * The card in `slot` as fresh objects, every one built with its keys in canonical (sorted) order,
 * so that its canonical JSON is one native stringify (./board_bytes.ts).
 */
export function cardAt(state: FoldState, slot: number): Card {
  const table = state.table;
  const flags = table.flags[slot];
  const card = {} as Card;
  if (flags & FLAG.cardDiff) card.diff = diffAt(table, slot);
  if (flags & FLAG.gates) card.gates = state.gates.get(slot)!;
  card.last_index = table.lastIndex[slot];
  if (flags & FLAG.role) card.role = table.textOf(slot, TEXT.role);
  card.task_id = state.ids[slot];
  if (flags & FLAG.title) card.title = table.textOf(slot, TEXT.title);
  if (flags & FLAG.verdict) card.verdict = { ...state.verdicts.get(slot)! };
  return card;
}

/** The card of `taskId` and its column, if it has a card. */
export function cardOf(
  state: FoldState,
  taskId: string,
): { card: Card; column: Column } | undefined {
  const slot = cardSlot(state, taskId);
  return slot === undefined
    ? undefined
    : { card: cardAt(state, slot), column: columnAt(state, slot) };
}

function columnAt(state: FoldState, slot: number): Column {
  return COLUMNS[state.table.column[slot] - 1];
}

/** Every card and its column, in the order their tasks were first seen. */
export function* cardsOf(state: FoldState): Generator<{ card: Card; column: Column }> {
  for (let slot = 0; slot < state.table.size; slot++) {
    if (state.table.column[slot] !== NO_CARD) {
      yield { card: cardAt(state, slot), column: columnAt(state, slot) };
    }
  }
}

/** Cards per column, keys in canonical (sorted) order as the board's columns are. */
export function columnCounts(state: FoldState): Record<Column, number> {
  const counts = { gated: 0, merged: 0, needs_review: 0, queued: 0, running: 0 };
  const column = state.table.column;
  for (let slot = 0; slot < state.table.size; slot++) {
    if (column[slot] !== NO_CARD) counts[COLUMNS[column[slot] - 1]]++;
  }
  return counts;
}

/** The columns in canonical (sorted) key order, as the board's JSON has them. */
export const SORTED_COLUMNS = ["gated", "merged", "needs_review", "queued", "running"] as const;

/**
 * The slots of each column's cards, ordered by last transition then task id (by code point, as
 * Python sorts), keyed in canonical order.
 */
export function columnSlots(state: FoldState): Record<Column, number[]> {
  const columns = { gated: [], merged: [], needs_review: [], queued: [], running: [] } as Record<
    Column,
    number[]
  >;
  const { column, lastIndex, size } = state.table;
  for (let slot = 0; slot < size; slot++) {
    if (column[slot] !== NO_CARD) columns[COLUMNS[column[slot] - 1]].push(slot);
  }
  const ids = state.ids;
  const order = (a: number, b: number) =>
    lastIndex[a] !== lastIndex[b] ? lastIndex[a] - lastIndex[b] : compareCodePoints(ids[a], ids[b]);
  for (const name of SORTED_COLUMNS) columns[name].sort(order);
  return columns;
}

/**
 * The board of `state` as objects (what a review action answers beside its receipt, and what
 * tests read). The signed bytes are never made from it: ./board_bytes.ts writes them.
 */
export function boardOf(state: FoldState): Board {
  const slots = columnSlots(state);
  const columns = {} as Record<Column, Card[]>;
  for (const name of SORTED_COLUMNS) columns[name] = slots[name].map((s) => cardAt(state, s));
  return {
    columns,
    event_count: state.eventCount,
    run: { completed: state.completed, started: state.started },
    schema_version: 1,
  };
}

/** Fold a whole list of rows (each with its line index) into a state. */
export function foldRows(rows: Iterable<{ index: number; row: JournalEvent }>): FoldState {
  const state = initialFoldState();
  for (const { index, row } of rows) foldRow(state, row, index);
  return state;
}

/** Fold a whole list of rows (each with its line index) into a board. */
export function foldBoard(rows: Iterable<{ index: number; row: JournalEvent }>): Board {
  return boardOf(foldRows(rows));
}
