/**
 * Incremental verification of a growing journal. The state after the last complete line is
 * kept together with the bytes it was computed from, so a later read compares that prefix
 * (one native memcmp) and only verifies and folds the new suffix. Any change to the
 * prefix — an edit, a truncation, a rewrite — starts over from row 0: the cache can never
 * answer for bytes it did not verify.
 */
import { Buffer } from "node:buffer";
import type { JournalRow } from "./row.ts";
import { ChainWalker } from "./verify.ts";

/** Consumes verified-or-not rows in order (the board fold is one). */
export interface RowSink<S> {
  init(): S;
  apply(state: S, row: JournalRow, index: number): void;
  clone(state: S): S;
}

/** A sink that keeps nothing: for callers that only need the chain (appends, `verify`). */
export const NO_SINK: RowSink<null> = {
  init: () => null,
  apply: () => {},
  clone: () => null,
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

/** One journal's incremental state; feed it the file's current bytes. */
export class IncrementalJournal<S> {
  #sink: RowSink<S>;
  #walker = new ChainWalker();
  #state: S;
  /** The bytes last read (adopted from the caller); the first `#committed` are verified. */
  #seen: Uint8Array = new Uint8Array(0);
  #released: Uint8Array | undefined;
  #committed = 0;
  #version = ++versions;

  constructor(sink: RowSink<S>) {
    this.#sink = sink;
    this.#state = sink.init();
  }

  #reset(): void {
    this.#walker = new ChainWalker();
    this.#state = this.#sink.init();
    this.#committed = 0;
    this.#version = ++versions;
  }

  #prefixUnchanged(bytes: Uint8Array): boolean {
    if (bytes.length < this.#committed) return false;
    const n = this.#committed;
    return Buffer.compare(
      Buffer.from(bytes.buffer, bytes.byteOffset, n),
      Buffer.from(this.#seen.buffer, this.#seen.byteOffset, n),
    ) === 0;
  }

  // Keep `bytes` itself rather than a copy (copying 40 MB into fresh memory costs more than the
  // whole incremental refresh); the previous buffer goes back to the caller for reuse.
  #adopt(bytes: Uint8Array): void {
    if (this.#seen.buffer !== bytes.buffer && this.#seen.length > 0) {
      this.#released = new Uint8Array(this.#seen.buffer as ArrayBuffer);
    }
    this.#seen = bytes;
  }

  /** A buffer this view no longer needs (the one it held before the last update), once. */
  takeReleasedBuffer(): Uint8Array | undefined {
    const released = this.#released;
    this.#released = undefined;
    return released;
  }

  /**
   * Bring the state up to `bytes` (the whole file as read now) and return a snapshot of it.
   * The view keeps `bytes`: the caller must not write into that memory afterwards.
   */
  update(bytes: Uint8Array): JournalSnapshot<S> {
    if (this.#committed > 0 && !this.#prefixUnchanged(bytes)) this.#reset();
    const end = bytes.lastIndexOf(NEWLINE) + 1;
    if (end > this.#committed) {
      const start = this.#committed;
      const lines = decoder.decode(bytes.subarray(start, end - 1)).split("\n");
      let at = start;
      for (const line of lines) {
        const lineEnd = bytes.indexOf(NEWLINE, at);
        this.#feed(this.#walker, this.#state, line, bytes.subarray(at, lineEnd), false);
        at = lineEnd + 1;
      }
      this.#committed = end;
      this.#version = ++versions;
    }
    this.#adopt(bytes);
    if (end === bytes.length) {
      return {
        walker: this.#walker,
        state: this.#state,
        byteLength: bytes.length,
        endsWithNewline: true,
        version: this.#version,
      };
    }
    // A last line without a newline: peek at it on copies, never commit it.
    const walker = this.#walker.clone();
    const state = this.#sink.clone(this.#state);
    const tail = bytes.subarray(end);
    this.#feed(walker, state, decoder.decode(tail), tail, true);
    return { walker, state, byteLength: bytes.length, endsWithNewline: false, version: ++versions };
  }

  #feed(walker: ChainWalker, state: S, line: string, lineBytes: Uint8Array, isTail: boolean): void {
    const index = walker.lineIndex;
    const row = isTail ? walker.pushTail(line) : walker.push(line, lineBytes);
    if (row) this.#sink.apply(state, row, index);
  }
}
