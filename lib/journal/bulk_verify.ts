/**
 * Bulk verification of journal lines that are already canonical (nearly all of them), in
 * WebAssembly (wasm/assembly/journal_scan.ts): one pass proves each line canonical, checks its
 * `seq` and `prev`, and SHA-256 runs over four rows at once. It only ever proves lines; the
 * first line it cannot prove is left to the JavaScript verifier (lib/journal/verify.ts), which
 * reports exactly what is wrong with it — or verifies it the slow way, after which the bulk
 * path resumes. Both agree on every line by construction: a proven line is one whose bytes are
 * the canonical JSON of what they parse to, so the slow path would hash the very same bytes.
 */
import { SCAN_WASM_BASE64 } from "./wasm/journal_scan_wasm.ts";

/** What a proven line holds, as offsets into the window's text (quotes included). */
export interface ProvenLines {
  /** The window's bytes as text: ASCII where lines were proven, so offsets are characters. */
  text: string;
  /** Per line: start, newline, data start, data end, type start, type end, task_id start, end. */
  records: Uint32Array;
  count: number;
}

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
  scan(length: number, seq: number, maxLines: number, records: number, claimed: number): number;
  head: number;
  window: number;
  records: number;
  claimed: number;
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
    const needed = claimed + MAX_LINES * 32;
    if (memory.buffer.byteLength < needed) {
      memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
    }
    (exports.init as () => void)();
    scanner = {
      memory,
      scan: exports.scan as Scanner["scan"],
      head: (exports.headAddress as () => number)(),
      window,
      records,
      claimed,
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

/**
 * Prove the lines of `bytes[from, end)` (`end` just after a newline) in order from `cursor`,
 * handing each window of proven lines to `each` (with the 0-based index of its first line).
 * Returns where proof stopped (`end` when every line was proven) and advances `cursor`.
 */
export function proveLines(
  bytes: Uint8Array,
  from: number,
  end: number,
  cursor: ProofCursor,
  each: (lines: ProvenLines, firstIndex: number) => void,
): number {
  const wasm = loadScanner();
  if (!wasm) return from;
  let memory = new Uint8Array(wasm.memory.buffer);
  if (!writeHead(memory, wasm.head, cursor.head)) return from;
  let at = from;
  while (at < end) {
    let stop = at + WINDOW_BYTES >= end ? end : bytes.lastIndexOf(10, at + WINDOW_BYTES - 1) + 1;
    if (stop <= at) stop = bytes.indexOf(10, at) + 1; // one long line
    if (stop <= at || stop - at > MAX_WINDOW_BYTES) break; // the slow path takes it
    if (stop > end) stop = end;
    memory = new Uint8Array(wasm.memory.buffer);
    memory.set(bytes.subarray(at, stop), wasm.window);
    memory.fill(0, wasm.window + (stop - at), wasm.window + (stop - at) + SLACK);
    const count = wasm.scan(stop - at, cursor.nextSeq, MAX_LINES, wasm.records, wasm.claimed);
    if (count === 0) break;
    const records = new Uint32Array(wasm.memory.buffer, wasm.records, count * RECORD_WORDS);
    const provenEnd = records[(count - 1) * RECORD_WORDS + 1] + 1;
    each(
      { text: decoder.decode(bytes.subarray(at, at + provenEnd)), records, count },
      cursor.nextSeq,
    );
    cursor.nextSeq += count;
    at += provenEnd;
    if (at < stop) break; // a line it could not prove
  }
  cursor.head = readHead(new Uint8Array(wasm.memory.buffer), wasm.head);
  return at;
}
