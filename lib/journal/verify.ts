/**
 * Pure chain verification (DESIGN.md §4): each line parses, `seq` matches its index,
 * `prev` matches the previous row's hash and `hash` recomputes. No files, no clocks.
 */
import { canonicalJson, stringifiesCanonically } from "./canonical_json.ts";
import { HEX64, sha256Hex, ZERO_HASH } from "./hash.ts";
import type { JournalRow } from "./row.ts";
import { hash as oneShotHash } from "node:crypto";

/** Why a row failed verification. */
export type FaultKind = "unparseable" | "torn_tail" | "shape" | "seq" | "prev" | "hash";

/** The first bad row of a chain, with what was expected and what was found. */
export interface ChainFault {
  /** 0-based line index of the bad row. */
  seq: number;
  kind: FaultKind;
  expected: string;
  actual: string;
  message: string;
}

/** Where verification stands: the next expected `seq` and `prev`. */
export interface ChainCursor {
  nextSeq: number;
  /** The `prev` the next row must carry. */
  head: string;
}

/** The cursor of an empty chain. */
function emptyCursor(): ChainCursor {
  return { nextSeq: 0, head: ZERO_HASH };
}

/** Outcome of checking one line against the cursor. */
interface LineOutcome {
  /** The parsed row when the line is JSON of the right shape (folded even when the chain is broken). */
  row?: JournalRow;
  fault?: ChainFault;
}

const PRINTABLE_ASCII_ONLY = /^[\x20-\x7e]*$/;

// A decoded line is ASCII exactly when it has as many characters as bytes (raw control
// characters cannot survive the stringify comparison; DEL can, so it is looked for).
function printableAscii(line: string, lineBytes: Uint8Array | undefined): boolean {
  if (!lineBytes) return PRINTABLE_ASCII_ONLY.test(line);
  return lineBytes.length === line.length && line.indexOf("\x7f") === -1;
}
const HASH_KEY_LENGTH = ',"hash":"'.length + 64 + 1;
let scratch = new Uint8Array(4096);

/**
 * Recompute a row's hash. When the stored line is already canonical (the normal case, proven
 * cheaply by a native round trip) the hash is taken over the line minus its `hash` member;
 * otherwise the row is re-encoded canonically. Returns undefined when it has no canonical form.
 */
function recomputeRowHash(
  line: string,
  row: Record<string, unknown>,
  lineBytes?: Uint8Array,
): string | undefined {
  if (
    printableAscii(line, lineBytes) && JSON.stringify(row) === line && stringifiesCanonically(row)
  ) {
    const at = line.lastIndexOf(',"hash":"');
    if (at > 0) {
      // An ASCII line's characters are its bytes: hash the stored bytes minus the hash member,
      // joined in a scratch buffer so the row costs one native call.
      const bytes = lineBytes ?? new TextEncoder().encode(line);
      const length = bytes.length - HASH_KEY_LENGTH;
      if (scratch.length < length) scratch = new Uint8Array(length * 2);
      scratch.set(bytes.subarray(0, at));
      scratch.set(bytes.subarray(at + HASH_KEY_LENGTH), at);
      return oneShotHash("sha256", scratch.subarray(0, length), "hex");
    }
  }
  const { hash: _hash, ...unsigned } = row;
  try {
    return sha256Hex(canonicalJson(unsigned));
  } catch {
    return undefined;
  }
}

// With `deferHex`, digest syntax is left to the caller, which checks it only when a comparison
// fails: a `prev` equal to the previous hash, or a `hash` equal to the recomputed one, is hex.
function shapeProblem(row: Record<string, unknown>, deferHex = false): string | undefined {
  if (typeof row.data !== "object" || row.data === null || Array.isArray(row.data)) {
    return "`data` must be an object";
  }
  if (typeof row.hash !== "string" || (!deferHex && !HEX64.test(row.hash))) {
    return "`hash` must be 64 lower-case hex";
  }
  if (typeof row.prev !== "string" || (!deferHex && !HEX64.test(row.prev))) {
    return "`prev` must be 64 lower-case hex";
  }
  if (!Number.isSafeInteger(row.seq)) return "`seq` must be an integer";
  if (typeof row.ts !== "string") return "`ts` must be a string";
  if (typeof row.type !== "string") return "`type` must be a string";
  if (!Number.isSafeInteger(row.v)) return "`v` must be an integer";
  return undefined;
}

function fault(seq: number, kind: FaultKind, expected: string, actual: string, what: string) {
  return {
    seq,
    kind,
    expected,
    actual,
    message: `row ${seq}: ${what} (expected ${expected}, found ${actual})`,
  };
}

/**
 * Check one line at index `cursor.nextSeq` and advance the cursor when it verifies.
 * The cursor is left untouched on a fault: the chain is broken from there on.
 */
function verifyLine(line: string, cursor: ChainCursor, lineBytes?: Uint8Array): LineOutcome {
  const seq = cursor.nextSeq;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (e) {
    const why = `line does not parse: ${(e as Error).message}`;
    return { fault: fault(seq, "unparseable", "a JSON object", preview(line), why) };
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    return {
      fault: fault(seq, "shape", "a JSON object", preview(line), "line is not a JSON object"),
    };
  }
  const obj = parsed as Record<string, unknown>;
  const problem = shapeProblem(obj, true);
  if (problem) return { fault: fault(seq, "shape", "a journal row", preview(line), problem) };
  const row = obj as unknown as JournalRow;
  if (row.seq !== seq) {
    return { row, fault: fault(seq, "seq", String(seq), String(row.seq), "seq out of order") };
  }
  if (row.prev !== cursor.head) {
    return { row, fault: prevFault(seq, cursor.head, row.prev) };
  }
  const recomputed = recomputeRowHash(line, obj, lineBytes);
  if (recomputed !== row.hash) {
    if (!HEX64.test(row.hash)) return { fault: digestSyntaxFault(seq, "hash", row.hash) };
    const expected = recomputed ?? "a row with a canonical form";
    return { row, fault: fault(seq, "hash", expected, row.hash, "hash does not recompute") };
  }
  cursor.nextSeq = seq + 1;
  cursor.head = row.hash;
  return { row };
}

function digestSyntaxFault(seq: number, field: "hash" | "prev", value: string): ChainFault {
  return fault(seq, "shape", "64 lower-case hex", preview(value), `\`${field}\` is not a digest`);
}

/** The fault of row `seq` whose `prev` is `found` where `expected` was due. */
function prevFault(seq: number, expected: string, found: string): ChainFault {
  if (!HEX64.test(found)) return digestSyntaxFault(seq, "prev", found);
  return fault(seq, "prev", expected, found, "prev does not chain onto the previous row");
}

/** A torn tail: a last line with no newline that is not a whole row. */
function tornTailFault(seq: number, line: string): ChainFault {
  return fault(seq, "torn_tail", "a whole row ending in a newline", preview(line), "torn tail");
}

function preview(line: string): string {
  return line.length > 80 ? JSON.stringify(line.slice(0, 77) + "...") : JSON.stringify(line);
}

/**
 * Walks lines in order, verifying until the first fault and still parsing after it (the board
 * of a tampered journal is rendered, marked unverified). Cheap to copy: the state is a few values.
 */
export class ChainWalker {
  cursor: ChainCursor;
  firstFault?: ChainFault;
  /** Rows that parsed (the board's `event_count`). */
  rowCount = 0;
  /** Hash of the last row that parsed: the head the file claims. */
  lastHash = ZERO_HASH;
  /** Index of the next line. */
  lineIndex: number;

  constructor() {
    this.lineIndex = 0;
    this.cursor = emptyCursor();
  }

  /** The head the next append must chain onto (only meaningful while verified). */
  get head(): string {
    return this.cursor.head;
  }

  /** Count `n` lines proven in bulk (lib/journal/bulk_verify.ts), the last hashing to `head`. */
  acceptProven(n: number, head: string): void {
    if (n <= 0) return;
    this.cursor = { nextSeq: this.cursor.nextSeq + n, head };
    this.rowCount += n;
    this.lineIndex += n;
    this.lastHash = head;
  }

  /** True while no fault was seen. */
  get verified(): boolean {
    return this.firstFault === undefined;
  }

  /** Feed one newline-terminated line (and its UTF-8 bytes, when at hand); returns the row to fold. */
  push(line: string, lineBytes?: Uint8Array): JournalRow | undefined {
    const outcome = this.firstFault ? parseOnly(line) : verifyLine(line, this.cursor, lineBytes);
    if (outcome.fault && !this.firstFault) this.firstFault = outcome.fault;
    this.lineIndex++;
    if (outcome.row) {
      this.rowCount++;
      this.lastHash = outcome.row.hash;
    }
    return outcome.row;
  }

  /** Feed a last line that has no newline: a torn tail unless it is a whole row. */
  pushTail(line: string): JournalRow | undefined {
    const index = this.lineIndex;
    const wasVerified = this.verified;
    const row = this.push(line);
    if (!row && wasVerified) this.firstFault = tornTailFault(index, line);
    return row;
  }

  /** An independent copy (to peek at a tail without committing it). */
  clone(): ChainWalker {
    const copy = new ChainWalker();
    copy.cursor = { ...this.cursor };
    copy.firstFault = this.firstFault;
    copy.rowCount = this.rowCount;
    copy.lastHash = this.lastHash;
    copy.lineIndex = this.lineIndex;
    return copy;
  }
}

/** Result of verifying a whole journal text. */
export interface ChainReport {
  verified: boolean;
  /** Hash of the last row that parsed (ZERO_HASH for an empty journal). */
  head: string;
  /** Number of rows that parsed. */
  rowCount: number;
  firstFault?: ChainFault;
  /** Rows that parsed, each with its 0-based line index. */
  rows: { index: number; row: JournalRow }[];
}

/** Verify a whole journal text (pure): every row, the chain, and the torn-tail rule. */
export function verifyJournalText(text: string): ChainReport {
  const walker = new ChainWalker();
  const rows: { index: number; row: JournalRow }[] = [];
  const lines = text.split("\n");
  const tail = lines.pop()!; // "" when the text ends with a newline
  for (const line of lines) {
    const index = walker.lineIndex;
    const row = walker.push(line);
    if (row) rows.push({ index, row });
  }
  if (tail !== "") {
    const index = walker.lineIndex;
    const row = walker.pushTail(tail);
    if (row) rows.push({ index, row });
  }
  return {
    verified: walker.verified,
    head: walker.lastHash,
    rowCount: walker.rowCount,
    firstFault: walker.firstFault,
    rows,
  };
}

/** Parse a line after the chain already broke: rows are still folded, not verified. */
function parseOnly(line: string): LineOutcome {
  try {
    const parsed = JSON.parse(line);
    if (typeof parsed === "object" && parsed !== null && !shapeProblem(parsed)) {
      return { row: parsed as JournalRow };
    }
  } catch { /* not folded */ }
  return {};
}
