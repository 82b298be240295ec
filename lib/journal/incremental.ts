/**
 * Incremental verification of a growing journal. The state after the last complete line is
 * kept together with a fingerprint of the bytes it was computed from (SHA-256 digests of the
 * byte ranges read so far, not the bytes: a 40 MB journal keeps a few digests, not 40 MB), so a
 * later read re-hashes that prefix natively and only verifies and folds the new suffix. Any
 * change to the prefix — an edit, a truncation, a rewrite — starts over from row 0: the cache
 * can never answer for bytes it did not verify. A read may leave the digest of what it verified
 * to be taken later ({@link ReadOptions.digestLater}); until it is, the next read starts over.
 */
import { createHash } from "node:crypto";
import type { JournalEvent } from "./row.ts";
import { ChainWalker } from "./verify.ts";
import { type DataNeed, proveLines } from "./bulk_verify.ts";

export type { DataNeed };

/** Consumes verified-or-not rows in order (the board fold is one). */
export interface RowSink<S> {
  init(): S;
  /** Fold one row; sinks read `type` and `data` only, never the chain envelope. */
  apply(state: S, row: JournalEvent, index: number): void;
  clone(state: S): S;
  /**
   * What `apply` reads of a row of this type: all of `data` (the default), only its
   * `task_id`, or nothing. Rows proven in bulk are parsed no further than this.
   */
  reads?(type: string): DataNeed;
}

/** Lines are decoded this many bytes at a time (cut at a newline), so a 40 MB journal never
 * becomes one 40 MB string: the heap stays small, and so does the memory a process keeps. */
const DECODE_CHUNK = 1 << 20;

/** Feed every newline-terminated line of `bytes[start, end)` to `each`, with its bytes. */
function forEachLine(
  bytes: Uint8Array,
  start: number,
  end: number,
  each: (line: string, lineBytes: Uint8Array) => void,
): void {
  let at = start;
  while (at < end) {
    const cut = at + DECODE_CHUNK >= end ? end : bytes.indexOf(NEWLINE, at + DECODE_CHUNK) + 1;
    const chunkEnd = cut <= at || cut > end ? end : cut;
    const lines = decoder.decode(bytes.subarray(at, chunkEnd - 1)).split("\n");
    for (const line of lines) {
      const lineEnd = bytes.indexOf(NEWLINE, at);
      each(line, bytes.subarray(at, lineEnd));
      at = lineEnd + 1;
    }
  }
}

const readsAll = (): DataNeed => "data";

/** A sink that keeps nothing: for callers that only need the chain (appends, `verify`). */
export const NO_SINK: RowSink<null> = {
  init: () => null,
  apply: () => {},
  clone: () => null,
  reads: () => "nothing",
};

/** Verification and fold state of the bytes read. */
export interface JournalSnapshot<S> {
  walker: ChainWalker;
  state: S;
  /** Bytes read. */
  byteLength: number;
  /** False when the last bytes are not newline-terminated. */
  endsWithNewline: boolean;
  /** Changes whenever the snapshot describes different bytes (memo key for derived values). */
  version: number;
}

const NEWLINE = 10;
const decoder = new TextDecoder("utf-8", { fatal: false });
let versions = 0;

/** A verified byte range and its digest (null while it is still to be taken). */
interface Span {
  start: number;
  end: number;
  digest: string | null;
}

/** Options of {@link IncrementalJournal.read}. */
export interface ReadOptions {
  /**
   * Do not hash the bytes as they are verified: the range read is left without a digest
   * ({@link IncrementalJournal.pendingDigest}) for the caller to take later, from bytes it knows
   * to be the same ({@link IncrementalJournal.settleDigest}). Until then a later read cannot
   * vouch for the prefix and starts over from row 0. For a view read once, or of a file whose
   * identity shows it unchanged until the digest is taken (lib/journal/later_digest.ts).
   */
  digestLater?: boolean;
}

/** A verified range still without its digest, and the view version it belongs to. */
export interface PendingDigest {
  start: number;
  end: number;
  version: number;
}

/** Spans beyond this many are folded into one on the next successful prefix check. */
const MAX_SPANS = 8;

/** A file read in place: its size, and synchronous reads at a position (0 at its end). */
export interface ByteSource {
  size: number;
  readAt(position: number, into: Uint8Array): number;
}

/** Bytes in memory as a {@link ByteSource}. */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.length,
    readAt(position, into) {
      const n = Math.min(into.length, bytes.length - position);
      into.set(bytes.subarray(position, position + n));
      return n;
    },
  };
}

/** Reads go through buffers of this size (a longer line grows its buffer), never the whole file. */
const READ_CHUNK = 1 << 20;
const idleBuffers: Uint8Array[] = [];

/** SHA-256 (hex) of `source[start, end)`, read through `buffer`; null when the file is shorter. */
function digestRange(
  source: ByteSource,
  start: number,
  end: number,
  buffer: Uint8Array,
  alsoInto?: ReturnType<typeof createHash>,
): string | null {
  const hasher = createHash("sha256");
  for (let at = start; at < end;) {
    const n = source.readAt(at, buffer.subarray(0, Math.min(buffer.length, end - at)));
    if (n === 0) return null;
    hasher.update(buffer.subarray(0, n));
    alsoInto?.update(buffer.subarray(0, n));
    at += n;
  }
  return hasher.digest("hex");
}

/** One journal's incremental state; feed it the file's current bytes. */
export class IncrementalJournal<S> {
  #sink: RowSink<S>;
  #walker = new ChainWalker();
  #state: S;
  /** Digests of the byte ranges verified so far, covering `[0, #committed)` in order. */
  #spans: Span[] = [];
  #committed = 0;
  #version = ++versions;

  constructor(sink: RowSink<S>) {
    this.#sink = sink;
    this.#state = sink.init();
  }

  #reset(): void {
    this.#walker = new ChainWalker();
    this.#state = this.#sink.init();
    this.#spans = [];
    this.#committed = 0;
    this.#version = ++versions;
  }

  #prefixUnchanged(source: ByteSource, buffer: Uint8Array): boolean {
    if (source.size < this.#committed) return false;
    if (this.#spans.some((span) => span.digest === null)) return false; // nothing to compare
    const whole = this.#spans.length > MAX_SPANS ? createHash("sha256") : undefined;
    for (const span of this.#spans) {
      if (digestRange(source, span.start, span.end, buffer, whole) !== span.digest) return false;
    }
    if (whole) this.#spans = [{ start: 0, end: this.#committed, digest: whole.digest("hex") }];
    return true;
  }

  /**
   * Bring the state up to the file as `source` reads it now, through a small buffer rather than
   * holding all of it: the prefix verified before is re-hashed, then only new lines are verified
   * and folded. Synchronous, so two requests reading one journal cannot interleave in a view.
   */
  read(source: ByteSource, options: ReadOptions = {}): JournalSnapshot<S> {
    const initial = idleBuffers.pop() ?? new Uint8Array(READ_CHUNK);
    try {
      return this.#read(source, initial, options.digestLater === true);
    } finally {
      if (idleBuffers.length < 4) idleBuffers.push(initial);
    }
  }

  /** The verified range a read left without a digest ({@link ReadOptions.digestLater}), if any. */
  pendingDigest(): PendingDigest | undefined {
    const span = this.#spans.find((s) => s.digest === null);
    return span && { start: span.start, end: span.end, version: this.#version };
  }

  /**
   * Record the digest of a range {@link pendingDigest} named — SHA-256 (hex) of the very bytes
   * that were verified, which only the caller can vouch for. Ignored (false) when the view has
   * moved on since (another read started over or added rows).
   */
  settleDigest(pending: PendingDigest, digest: string): boolean {
    if (pending.version !== this.#version) return false;
    const span = this.#spans.find((s) => s.start === pending.start && s.end === pending.end);
    if (!span || span.digest !== null) return false;
    span.digest = digest;
    return true;
  }

  /** {@link read} of bytes in memory (the view keeps nothing of them but digests). */
  update(bytes: Uint8Array): JournalSnapshot<S> {
    return this.read(bytesSource(bytes));
  }

  #read(source: ByteSource, initial: Uint8Array, digestLater: boolean): JournalSnapshot<S> {
    let buffer = initial;
    if (this.#committed > 0 && !this.#prefixUnchanged(source, buffer)) this.#reset();
    const from = this.#committed;
    const hasher = digestLater ? undefined : createHash("sha256");
    let position = from; // file offset of buffer[0]
    let filled = 0;
    while (position + filled < source.size) {
      if (filled === buffer.length) { // one line longer than the buffer
        const larger = new Uint8Array(buffer.length * 2);
        larger.set(buffer);
        buffer = larger;
      }
      const n = source.readAt(
        position + filled,
        buffer.subarray(filled, Math.min(buffer.length, filled + source.size - position)),
      );
      if (n === 0) break;
      filled += n;
      const lines = buffer.lastIndexOf(NEWLINE, filled - 1) + 1;
      if (lines === 0) continue;
      this.#walk(buffer, 0, lines);
      hasher?.update(buffer.subarray(0, lines));
      buffer.copyWithin(0, lines, filled);
      position += lines;
      filled -= lines;
    }
    if (position > from) {
      this.#spans.push({ start: from, end: position, digest: hasher?.digest("hex") ?? null });
      this.#committed = position;
      this.#version = ++versions;
    }
    return this.#snapshot(buffer.subarray(0, filled), position + filled);
  }

  /** The snapshot after the committed lines, peeking at a `tail` without a newline if any. */
  #snapshot(tail: Uint8Array, byteLength: number): JournalSnapshot<S> {
    if (tail.length === 0) {
      return {
        walker: this.#walker,
        state: this.#state,
        byteLength,
        endsWithNewline: true,
        version: this.#version,
      };
    }
    // A last line without a newline: peek at it on copies, never commit it.
    const walker = this.#walker.clone();
    const state = this.#sink.clone(this.#state);
    this.#feed(walker, state, decoder.decode(tail), tail, true);
    return { walker, state, byteLength, endsWithNewline: false, version: ++versions };
  }

  /** Slow lines after a bulk attempt failed on this many in a row before trying bulk again. */
  static readonly #MAX_BACKOFF = 512;

  /**
   * Verify and fold the lines of `bytes[from, end)`: in bulk while lines are proven there, one
   * line the slow way where they are not (which reports the fault, or verifies a line that is
   * valid but not canonical). A journal of such lines backs off from bulk attempts, so it costs
   * little more than the slow path alone.
   */
  #walk(bytes: Uint8Array, from: number, end: number): void {
    let at = from;
    let backoff = 1;
    let unprovable = -1; // a line the bulk path just stopped at
    while (at < end) {
      const walker = this.#walker;
      if (walker.verified && at !== unprovable) {
        const cursor = { nextSeq: walker.cursor.nextSeq, head: walker.cursor.head };
        const sink = this.#sink;
        const state = this.#state;
        const proven = proveLines(bytes, cursor, {
          from: at,
          end,
          reads: sink.reads?.bind(sink) ?? readsAll,
          apply: (row, index) => sink.apply(state, row, index),
        });
        if (proven > at) {
          walker.acceptProven(cursor.nextSeq - walker.cursor.nextSeq, cursor.head);
          at = unprovable = proven;
          backoff = 1;
          continue;
        }
        backoff = Math.min(backoff * 2, IncrementalJournal.#MAX_BACKOFF);
      }
      // The slow way: everything once the chain is broken, else the next few lines.
      let stop = end;
      if (walker.verified) {
        stop = at;
        for (let n = 0; n < backoff && stop < end; n++) stop = bytes.indexOf(NEWLINE, stop) + 1;
      }
      forEachLine(bytes, at, stop, (line, lineBytes) => {
        this.#feed(this.#walker, this.#state, line, lineBytes, false);
      });
      at = stop;
    }
  }

  #feed(walker: ChainWalker, state: S, line: string, lineBytes: Uint8Array, isTail: boolean): void {
    const index = walker.lineIndex;
    const row = isTail ? walker.pushTail(line) : walker.push(line, lineBytes);
    if (row) this.#sink.apply(state, row, index);
  }
}
