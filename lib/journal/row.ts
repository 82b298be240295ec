/**
 * The one place where a journal event becomes stored bytes and a hash (DESIGN.md §4).
 */
import { canonicalJson, type JsonValue } from "./canonical_json.ts";
import { sha256Hex } from "./hash.ts";

/** Current journal row format version. */
const ROW_VERSION = 1;

/** A journal row as stored: the canonical JSON of this object is one line. */
export interface JournalRow {
  data: Record<string, JsonValue>;
  hash: string;
  prev: string;
  seq: number;
  ts: string;
  type: string;
  v: number;
}

/** What a caller supplies to append one event. */
export interface JournalEvent {
  type: string;
  data: Record<string, JsonValue>;
}

/** A fully built row: the parsed form, its line (without newline) and its hash. */
export interface EncodedRow {
  row: JournalRow;
  line: string;
  hash: string;
}

/** Where an entry goes in its hash chain (a journal row, an audit entry). */
export interface ChainPosition {
  /** What the previous entry chains by: a journal row's `hash`, an audit entry's `hmac`. */
  prev: string;
  /** 0-based. */
  seq: number;
  /** ISO 8601; recorded, never read by the fold. */
  ts: string;
}

/** Event type names: lower snake case, so they read the same in every tool. */
const EVENT_TYPE = /^[a-z][a-z0-9_.]{0,63}$/;

/**
 * Build the row that follows `prev` at `seq`: hash = SHA-256 of the canonical JSON of
 * the row without `hash`, line = canonical JSON of the whole row.
 */
export function encodeRow(event: JournalEvent, { prev, seq, ts }: ChainPosition): EncodedRow {
  if (!EVENT_TYPE.test(event.type)) {
    throw new TypeError(
      `journal event type ${JSON.stringify(event.type)} must match ${EVENT_TYPE}`,
    );
  }
  const unsigned = { data: event.data, prev, seq, ts, type: event.type, v: ROW_VERSION };
  const hash = sha256Hex(canonicalJson(unsigned));
  const row: JournalRow = { ...unsigned, hash };
  return { row, line: canonicalJson(row), hash };
}
