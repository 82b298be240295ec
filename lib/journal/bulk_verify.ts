/**
 * Bulk verification of journal lines that are already canonical (nearly all of them), in
 * WebAssembly (wasm/assembly/journal_scan.ts): one pass proves each line canonical, checks its
 * `seq` and `prev`, and SHA-256 runs over four rows at once. It only ever proves lines; the
 * first line it cannot prove is left to the JavaScript verifier (lib/journal/verify.ts), which
 * reports exactly what is wrong with it — or verifies it the slow way, after which the bulk
 * path resumes. Both agree on every line by construction: a proven line is one whose bytes are
 * the canonical JSON of what they parse to, so the slow path would hash the very same bytes.
 */
import type { JsonValue } from "./canonical_json.ts";
import type { JournalEvent } from "./row.ts";
import { SCAN_WASM_BASE64 } from "./wasm/journal_scan_wasm.ts";

/** How much of a row's `data` a reader reads, by row type (see RowSink.reads). */
export type DataNeed = "data" | "task_id" | "nothing";
const NEED_CODE: Record<DataNeed, number> = { nothing: 0, task_id: 1, data: 2 };
const NEED_DATA = 2;
const NEED_TASK_ID = 1;

/** Where the fast path stands: the next expected `seq` and the head to chain onto (hex). */
export interface ProofCursor {
  nextSeq: number;
  head: string;
}

const RECORD_WORDS = 8;
/**
 * Bytes of journal copied into the scanner per call. Small enough that the window's text is an
 * ordinary young object (a string over ~128 KiB goes to V8's large-object space, freed only by
 * a full collection: 1 MiB windows grew a 40 MB first read's heap by ~40 MB). A line that does
 * not fit gets a window of its own up to MAX_WINDOW_BYTES; longer ones go the slow way.
 */
const WINDOW_BYTES = 64 << 10;
const MAX_WINDOW_BYTES = 1 << 20;
/** The shortest line the scanner can prove is longer than this, bounding the lines per window. */
const MIN_LINE_BYTES = 160;
const MAX_LINES = Math.ceil(MAX_WINDOW_BYTES / MIN_LINE_BYTES);
const SLACK = 64;

interface Scanner {
  memory: WebAssembly.Memory;
  scan(
    length: number,
    seq: number,
    maxLines: number,
    records: number,
    claimed: number,
    compact: number,
    otherwise: number,
  ): number;
  addType(length: number): number;
  nextTypeAddress(): number;
  head: number;
  needs: number;
  window: number;
  records: number;
  claimed: number;
  compact: number;
  /** Row type names by id (1-based), as registered with the scanner. */
  types: string[];
}

let scanner: Scanner | null | undefined;

/** The scanner, compiled once per thread; null where WebAssembly SIMD is unavailable. */
function loadScanner(): Scanner | null {
  if (scanner !== undefined) return scanner;
  try {
    const bytes = Uint8Array.from(atob(SCAN_WASM_BASE64), (c) => c.charCodeAt(0));
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {
      env: {
        abort: () => {
          throw new Error("journal scanner aborted");
        },
      },
    });
    const exports = instance.exports as Record<string, unknown>;
    const memory = exports.memory as WebAssembly.Memory;
    const window = (exports.windowAddress as () => number)();
    const records = window + MAX_WINDOW_BYTES + SLACK;
    const claimed = records + MAX_LINES * RECORD_WORDS * 4;
    const compact = claimed + MAX_LINES * 32;
    const needed = compact + MAX_WINDOW_BYTES + SLACK;
    if (memory.buffer.byteLength < needed) {
      memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
    }
    (exports.init as () => void)();
    scanner = {
      memory,
      scan: exports.scan as Scanner["scan"],
      addType: exports.addType as Scanner["addType"],
      nextTypeAddress: exports.nextTypeAddress as Scanner["nextTypeAddress"],
      head: (exports.headAddress as () => number)(),
      needs: (exports.needsAddress as () => number)(),
      window,
      records,
      claimed,
      compact,
      types: [""],
    };
  } catch {
    scanner = null;
  }
  return scanner;
}

const decoder = new TextDecoder();
const HEX64 = /^[0-9a-f]{64}$/;

/** The head as the scanner keeps it: its 64 hex digits. */
function writeHead(memory: Uint8Array, at: number, hex: string): boolean {
  if (!HEX64.test(hex)) return false;
  for (let i = 0; i < 64; i++) memory[at + i] = hex.charCodeAt(i);
  return true;
}

function readHead(memory: Uint8Array, at: number): string {
  return decoder.decode(memory.subarray(at, at + 64));
}

const NOTHING: Record<string, JsonValue> = Object.freeze({}) as Record<string, JsonValue>;
const PLAIN_TYPE = /^[\x20-\x21\x23-\x5b\x5d-\x7e]{1,63}$/; // printable, no quote or backslash

/** Register a row type the scanner has not seen, so later rows of it come as an id. */
function register(wasm: Scanner, type: string): void {
  if (!PLAIN_TYPE.test(type)) return;
  const memory = new Uint8Array(wasm.memory.buffer);
  const at = wasm.nextTypeAddress();
  for (let i = 0; i < type.length; i++) memory[at + i] = type.charCodeAt(i);
  if (wasm.addType(type.length) === wasm.types.length) wasm.types.push(type);
}

/** Which lines {@link proveLines} proves and what it hands on of each. */
export interface ProveLinesOptions {
  /** Offset of the first line. */
  from: number;
  /** Offset just after the last line's newline. */
  end: number;
  /** How much of a row's data the reader reads, by type. */
  reads: (type: string) => DataNeed;
  /** Takes each proven row with its 0-based line index. */
  apply: (row: JournalEvent, index: number) => void;
}

/**
 * Prove the lines of `bytes[from, end)` in order from `cursor`, handing each proven row to
 * `apply`: its type, and as much of its data as `reads` says the reader reads (all of it,
 * `{task_id}` alone, or nothing). Returns where proof stopped (`end` when every line was proven)
 * and advances `cursor`.
 */
export function proveLines(
  bytes: Uint8Array,
  cursor: ProofCursor,
  { from, end, reads, apply }: ProveLinesOptions,
): number {
  const wasm = loadScanner();
  if (!wasm) return from;
  let memory = new Uint8Array(wasm.memory.buffer);
  if (!writeHead(memory, wasm.head, cursor.head)) return from;
  const needs = wasm.types.map((type, id) => id === 0 ? 0 : NEED_CODE[reads(type)]);
  memory.set(needs, wasm.needs);
  let at = from;
  while (at < end) {
    let stop = at + WINDOW_BYTES >= end ? end : bytes.lastIndexOf(10, at + WINDOW_BYTES - 1) + 1;
    if (stop <= at) stop = bytes.indexOf(10, at) + 1; // one long line
    if (stop <= at || stop - at > MAX_WINDOW_BYTES) break; // the slow path takes it
    if (stop > end) stop = end;
    memory = new Uint8Array(wasm.memory.buffer);
    memory.set(bytes.subarray(at, stop), wasm.window);
    memory.fill(0, wasm.window + (stop - at), wasm.window + (stop - at) + SLACK);
    const count = wasm.scan(
      stop - at,
      cursor.nextSeq,
      MAX_LINES,
      wasm.records,
      wasm.claimed,
      wasm.compact,
      NEED_DATA, // a type it has no id for yet: all of data, the reader decides below
    );
    if (count === 0) break;
    const records = new Uint32Array(wasm.memory.buffer, wasm.records, count * RECORD_WORDS);
    const text = decoder.decode(
      memory.subarray(wasm.compact, wasm.compact + records[(count - 1) * RECORD_WORDS + 7]),
    );
    for (let i = 0, r = 0; i < count; i++, r += RECORD_WORDS) {
      const id = records[r + 4] & 0xff;
      let type: string;
      let need: number;
      if (id !== 0) {
        type = wasm.types[id];
        need = records[r + 4] >> 8;
      } else {
        type = JSON.parse(text.slice(records[r + 5], records[r + 6]));
        need = NEED_CODE[reads(type)];
        if (wasm.types.length <= 63 && !wasm.types.includes(type)) {
          register(wasm, type);
          memory = new Uint8Array(wasm.memory.buffer);
          memory[wasm.needs + wasm.types.length - 1] = need;
        }
      }
      let data = NOTHING;
      const wanted = text.slice(records[r + 6], records[r + 7]);
      if (need === NEED_DATA) data = JSON.parse(wanted);
      else if (need === NEED_TASK_ID && id === 0) { // the scanner copied all of data
        const { task_id } = JSON.parse(wanted);
        if (typeof task_id === "string") data = { task_id };
      } else if (need === NEED_TASK_ID && wanted !== "") data = { task_id: JSON.parse(wanted) };
      apply({ type, data }, cursor.nextSeq + i);
    }
    cursor.nextSeq += count;
    at += records[(count - 1) * RECORD_WORDS + 1] + 1;
    if (at < stop) break; // a line it could not prove
  }
  cursor.head = readHead(new Uint8Array(wasm.memory.buffer), wasm.head);
  return at;
}
