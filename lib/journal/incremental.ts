/**
 * Incremental verification of a growing journal. The state after the last complete line is
 * kept together with a fingerprint of the bytes it was computed from (SHA-256 digests of the
 * byte ranges read so far, not the bytes: a 40 MB journal keeps a few digests, not 40 MB), so a
 * later read re-hashes that prefix natively and only verifies and folds the new suffix. Any
 * change to the prefix — an edit, a truncation, a rewrite — starts over from row 0: the cache
 * can never answer for bytes it did not verify.
 */
import { hash as oneShotHash } from "node:crypto";
import type { JournalRow } from "./row.ts";
import { ChainWalker, linkWalkers, type WalkerState } from "./verify.ts";

/** Consumes verified-or-not rows in order (the board fold is one). */
export interface RowSink<S> {
  init(): S;
  apply(state: S, row: JournalRow, index: number): void;
  clone(state: S): S;
  /** Optional: fold a large first read on two cores (see {@link ParallelFold}). */
  parallel?: ParallelFold<S>;
}

/**
 * Splits a large first read into segments: this thread walks and folds the first while workers
 * take the others; then the chains are linked and the states merged in line order.
 */
export interface ParallelFold<S> {
  /** Reads smaller than this stay on one thread. */
  minBytes: number;
  /** How many segments a large first read is cut into (one per core). */
  segments: number;
  /** Walk and fold the complete lines of `bytes`, the first being line `startLine`. */
  foldSegment(bytes: Uint8Array, startLine: number): Promise<{ walker: WalkerState; state: S }>;
  /** Merge a later segment's state onto an earlier one's. */
  merge(left: S, right: S): S;
}

/** Lines are decoded this many bytes at a time (cut at a newline), so a 40 MB journal never
 * becomes one 40 MB string: the heap stays small, and so does the memory a process keeps. */
const DECODE_CHUNK = 1 << 20;

/** Feed every newline-terminated line of `bytes[start, end)` to `each`, with its bytes. */
export function forEachLine(
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

/** Walk and fold the complete lines of `bytes` as a segment starting at line `startLine`. */
export function walkSegment<S>(
  sink: RowSink<S>,
  bytes: Uint8Array,
  startLine: number,
): { walker: ChainWalker; state: S } {
  const walker = new ChainWalker(startLine);
  const state = sink.init();
  forEachLine(bytes, 0, bytes.lastIndexOf(NEWLINE) + 1, (line, lineBytes) => {
    const index = walker.lineIndex;
    const row = walker.push(line, lineBytes);
    if (row) sink.apply(state, row, index);
  });
  return { walker, state };
}

function countLines(bytes: Uint8Array, start: number, end: number): number {
  let n = 0;
  for (
    let at = bytes.indexOf(NEWLINE, start);
    at !== -1 && at < end;
    at = bytes.indexOf(NEWLINE, at + 1)
  ) n++;
  return n;
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

/** A verified byte range and its digest. */
interface Span {
  start: number;
  end: number;
  digest: string;
}

const digestOf = (bytes: Uint8Array, start: number, end: number) =>
  oneShotHash("sha256", bytes.subarray(start, end), "hex");

/** Spans beyond this many are folded into one on the next successful prefix check. */
const MAX_SPANS = 8;

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

  #prefixUnchanged(bytes: Uint8Array): boolean {
    if (bytes.length < this.#committed) return false;
    for (const span of this.#spans) {
      if (digestOf(bytes, span.start, span.end) !== span.digest) return false;
    }
    if (this.#spans.length > MAX_SPANS) {
      this.#spans = [{
        start: 0,
        end: this.#committed,
        digest: digestOf(bytes, 0, this.#committed),
      }];
    }
    return true;
  }

  #commit(bytes: Uint8Array, from: number, to: number): void {
    if (to > from) this.#spans.push({ start: from, end: to, digest: digestOf(bytes, from, to) });
    this.#committed = to;
    this.#version = ++versions;
  }

  #queue: Promise<unknown> = Promise.resolve();

  /**
   * Like {@link update}, but a large first read is folded on two cores when the sink can
   * (one walk's result, byte for byte). Calls are serialised per view.
   */
  refresh(bytes: Uint8Array): Promise<JournalSnapshot<S>> {
    const run = this.#queue.then(() => this.#refresh(bytes));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #refresh(bytes: Uint8Array): Promise<JournalSnapshot<S>> {
    const parallel = this.#sink.parallel;
    if (this.#committed > 0 && !this.#prefixUnchanged(bytes)) this.#reset();
    const end = bytes.lastIndexOf(NEWLINE) + 1;
    if (!parallel || this.#committed > 0 || end < parallel.minBytes) return this.update(bytes);
    const cuts = [0];
    for (let k = 1; k < parallel.segments; k++) {
      const cut = bytes.indexOf(NEWLINE, Math.floor((end * k) / parallel.segments)) + 1;
      if (cut > cuts.at(-1)! && cut < end) cuts.push(cut);
    }
    cuts.push(end);
    // The later segments go to workers; this thread folds the first one meanwhile.
    const folds: Promise<{ walker: WalkerState; state: S }>[] = [];
    let startLine = countLines(bytes, 0, cuts[1]);
    for (let i = 1; i + 1 < cuts.length; i++) {
      folds.push(parallel.foldSegment(bytes.subarray(cuts[i], cuts[i + 1]), startLine));
      startLine += countLines(bytes, cuts[i], cuts[i + 1]);
    }
    forEachLine(bytes, 0, cuts[1], (line, lineBytes) => {
      this.#feed(this.#walker, this.#state, line, lineBytes, false);
    });
    for (let i = 0; i + 1 < cuts.length; i++) this.#commit(bytes, cuts[i], cuts[i + 1]);
    for (const segment of await Promise.all(folds)) {
      this.#walker = linkWalkers(this.#walker, segment.walker);
      this.#state = parallel.merge(this.#state, segment.state);
    }
    this.#version = ++versions;
    return this.update(bytes);
  }

  /**
   * Bring the state up to `bytes` (the whole file as read now) and return a snapshot of it.
   * The view keeps nothing of `bytes` but digests: the caller may reuse that memory.
   */
  update(bytes: Uint8Array): JournalSnapshot<S> {
    if (this.#committed > 0 && !this.#prefixUnchanged(bytes)) this.#reset();
    const end = bytes.lastIndexOf(NEWLINE) + 1;
    if (end > this.#committed) {
      const from = this.#committed;
      forEachLine(bytes, from, end, (line, lineBytes) => {
        this.#feed(this.#walker, this.#state, line, lineBytes, false);
      });
      this.#commit(bytes, from, end);
    }
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
