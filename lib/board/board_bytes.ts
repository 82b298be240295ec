/**
 * The one writer of a board's canonical bytes (DESIGN.md §3, §5): what `projection_hash` signs and
 * `GET /review-board/runs/<run>` serves. The cards' JSON comes from the canonical encoder a few
 * dozen cards at a time; the frame around them (`{"columns":{"gated":[…],…},"event_count":N,
 * "run":{…},"schema_version":1}`, keys in sorted order) is written here by hand and proven equal
 * to the encoder's output of the whole board (lib/board/board_bytes_test.ts). The bytes go
 * straight into 256 KiB parts as they are made, so no 4.6 MB text of the whole board, nor a copy
 * of every card, lives in V8's young generation (docs/performance.md, "Tenth round").
 */
import { createHash } from "node:crypto";
import {
  canonicalJson,
  canonicalJsonOfOrdered,
  stringifiesCanonically,
} from "../journal/canonical_json.ts";
import type { Card } from "./types.ts";
import { cardAt, columnSlots, type FoldState, SORTED_COLUMNS } from "./fold.ts";

/** A board's canonical JSON as bytes, in parts (served one after another, never joined). */
export interface BoardBytes {
  parts: Uint8Array<ArrayBuffer>[];
  length: number;
  /** SHA-256 hex of the bytes: the receipt's `projection_hash`. */
  sha256: string;
}

/** Bytes per part (the last is cut to its length). */
export const PART_BYTES = 256 * 1024;

/** Cards per call of the canonical encoder: few enough that their text stays small. */
const CARDS_PER_CALL = 64;

/** The canonical bytes of the board of `state`. */
export function boardBytes(state: FoldState): BoardBytes {
  const out = new PartWriter();
  const slots = columnSlots(state);
  out.write('{"columns":{');
  for (const [i, name] of SORTED_COLUMNS.entries()) {
    out.write(i === 0 ? `"${name}":[` : `],"${name}":[`);
    writeCards(out, state, slots[name]);
  }
  out.write(
    `]},"event_count":${canonicalJson(state.eventCount)},` +
      `"run":{"completed":${canonicalJson(state.completed)},` +
      `"started":${canonicalJson(state.started)}},"schema_version":1}`,
  );
  return out.finish();
}

/** The cards of `slots`, comma-separated, as the canonical JSON of their array has them. */
function writeCards(out: PartWriter, state: FoldState, slots: number[]): void {
  for (let from = 0; from < slots.length; from += CARDS_PER_CALL) {
    const cards: Card[] = [];
    for (let i = from; i < Math.min(slots.length, from + CARDS_PER_CALL); i++) {
      cards.push(cardAt(state, slots[i]));
    }
    const json = cardsJson(cards);
    // `[c1,…,cn]` without its brackets, after the previous group's comma.
    out.write(from === 0 ? json.slice(1, -1) : "," + json.slice(1, -1));
  }
}

/**
 * Canonical JSON of cards built in key order by {@link cardAt}: only their gates (copied from
 * rows, in any key order) are checked, and if any is out of order the exact encoder writes them.
 */
function cardsJson(cards: Card[]): string {
  for (const card of cards) {
    if (card.gates && !stringifiesCanonically(card.gates)) return canonicalJson(cards);
  }
  return canonicalJsonOfOrdered(cards);
}

/** Canonical JSON (ASCII) written into fixed-size byte parts, hashed as they fill. */
class PartWriter {
  #parts: Uint8Array<ArrayBuffer>[] = [];
  #part = new Uint8Array(PART_BYTES);
  #at = 0;
  #length = 0;
  #hash = createHash("sha256");
  #encoder = new TextEncoder();

  write(text: string): void {
    let rest = text;
    for (;;) {
      const { read, written } = this.#encoder.encodeInto(rest, this.#part.subarray(this.#at));
      this.#at += written;
      this.#length += written;
      if (read === rest.length) return;
      rest = rest.slice(read);
      this.#close(this.#part.subarray(0, this.#at));
      this.#part = new Uint8Array(PART_BYTES);
      this.#at = 0;
    }
  }

  #close(part: Uint8Array<ArrayBuffer>): void {
    this.#hash.update(part);
    this.#parts.push(part);
  }

  finish(): BoardBytes {
    if (this.#at > 0) this.#close(this.#part.slice(0, this.#at));
    return { parts: this.#parts, length: this.#length, sha256: this.#hash.digest("hex") };
  }
}
