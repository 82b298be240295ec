/**
 * Incremental verification of a growing journal. The state after the last complete line is
 * kept together with the SHA-256 of the bytes it was computed from, so a later read re-hashes
 * that prefix (one native pass) and only verifies and folds the new suffix. Any change to the
 * prefix — an edit, a truncation, a rewrite — changes the digest and starts over from row 0:
 * the cache can never answer for bytes it did not verify.
 */
import { createHash, type Hash } from "node:crypto";
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
}

const NEWLINE = 10;
const decoder = new TextDecoder("utf-8", { fatal: false });

/** One journal's incremental state; feed it the file's current bytes. */
export class IncrementalJournal<S> {
  #sink: RowSink<S>;
  #walker = new ChainWalker();
  #state: S;
  #committed = 0;
  #prefixDigest = "";

  constructor(sink: RowSink<S>) {
    this.#sink = sink;
    this.#state = sink.init();
  }

  #reset(): void {
    this.#walker = new ChainWalker();
    this.#state = this.#sink.init();
    this.#committed = 0;
    this.#prefixDigest = "";
  }

  /** Bring the state up to `bytes` (the whole file as read now) and return a snapshot of it. */
  update(bytes: Uint8Array): JournalSnapshot<S> {
    let hasher: Hash = createHash("sha256");
    if (this.#committed > 0) {
      if (bytes.length < this.#committed) {
        this.#reset();
      } else {
        hasher.update(bytes.subarray(0, this.#committed));
        if (hasher.copy().digest("hex") !== this.#prefixDigest) {
          this.#reset();
          hasher = createHash("sha256");
        }
      }
    }
    const lastNewline = bytes.lastIndexOf(NEWLINE);
    const end = lastNewline + 1;
    if (end > this.#committed) {
      const text = decoder.decode(bytes.subarray(this.#committed, end - 1));
      for (const line of text.split("\n")) this.#feed(this.#walker, this.#state, line, false);
      hasher.update(bytes.subarray(this.#committed, end));
      this.#committed = end;
      this.#prefixDigest = hasher.digest("hex");
    }
    if (end === bytes.length) {
      return {
        walker: this.#walker,
        state: this.#state,
        byteLength: bytes.length,
        endsWithNewline: true,
      };
    }
    // A last line without a newline: peek at it on copies, never commit it.
    const walker = this.#walker.clone();
    const state = this.#sink.clone(this.#state);
    this.#feed(walker, state, decoder.decode(bytes.subarray(end)), true);
    return { walker, state, byteLength: bytes.length, endsWithNewline: false };
  }

  #feed(walker: ChainWalker, state: S, line: string, isTail: boolean): void {
    const index = walker.lineIndex;
    const row = isTail ? walker.pushTail(line) : walker.push(line);
    if (row) this.#sink.apply(state, row, index);
  }
}
