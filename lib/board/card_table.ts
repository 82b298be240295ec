/**
 * The board fold's cards kept outside the JS heap: one slot per task, its numbers in typed arrays
 * and its strings (title, role, diff hash) as code units in one byte arena (one byte each for
 * Latin-1 text, two for any other). A card as objects cost ~505 bytes on the heap (a map entry, a
 * wrapper, the card, its strings, its diff twice) and grew V8's young generation by ~17 MB while a
 * 100 000-row journal was folded; a slot costs 58 bytes and its text off the heap
 * (docs/performance.md, "Tenth round"). Pure data: the fold (./fold.ts) says what a row does to it.
 */

/** Which text of a slot. */
export const TEXT = { title: 0, role: 1, diffSha: 2 } as const;
/** A text field of a slot. */
export type TextField = typeof TEXT[keyof typeof TEXT];

const TEXT_FIELDS = 3;
const DIFF_NUMBERS = 3; // added, removed, files

/** Flags of a slot. */
export const FLAG = {
  title: 1,
  role: 2,
  /** The task has a diff capture (the diff endpoint's latest). */
  diff: 4,
  /** Its card shows the diff: a capture came while the card existed (so it is the latest). */
  cardDiff: 8,
  /** Its card has a verdict (kept beside the table: verdicts are few). */
  verdict: 16,
  /** Its card has gates (kept beside the table: they are JSON of any shape). */
  gates: 32,
} as const;

/** The numbers of a diff capture. */
export interface DiffNumbers {
  added: number;
  removed: number;
  files: number;
}

/** Slots of tasks: typed arrays grown by doubling, and the arena of their text. */
export class CardTable {
  size = 0;
  /** 0: no card (the task has only a diff capture); else 1 + its column's index in COLUMNS. */
  column: Uint8Array;
  flags: Uint8Array;
  lastIndex: Float64Array;
  /** added, removed, files of the latest diff capture, three per slot. */
  diffNumbers: Float64Array;
  /**
   * Byte offset in {@link arena} and length in code units of each text field, six words per slot;
   * the length's top bit marks text stored two bytes a code unit.
   */
  text: Uint32Array;
  arena: Uint8Array;
  arenaUsed = 0;

  constructor(capacity = 64, arenaCapacity = 4096) {
    this.column = new Uint8Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.lastIndex = new Float64Array(capacity);
    this.diffNumbers = new Float64Array(capacity * DIFF_NUMBERS);
    this.text = new Uint32Array(capacity * TEXT_FIELDS * 2);
    this.arena = new Uint8Array(arenaCapacity);
  }

  /** A new empty slot's number. */
  add(): number {
    if (this.size === this.column.length) this.#grow(this.size * 2);
    return this.size++;
  }

  #grow(capacity: number): void {
    this.column = grown(this.column, capacity);
    this.flags = grown(this.flags, capacity);
    this.lastIndex = grown(this.lastIndex, capacity);
    this.diffNumbers = grown(this.diffNumbers, capacity * DIFF_NUMBERS);
    this.text = grown(this.text, capacity * TEXT_FIELDS * 2);
  }

  /** Set a text field of `slot` (its old text stays in the arena: a task is claimed a few times). */
  setText(slot: number, field: TextField, value: string): void {
    const t = (slot * TEXT_FIELDS + field) * 2;
    if (this.#holds(this.text[t], this.text[t + 1], value)) return; // a retry's claim, a re-capture
    let wide = false;
    for (let i = 0; i < value.length && !wide; i++) wide = value.charCodeAt(i) > 0xff;
    // Latin-1 text takes a byte a code unit; other text two, at an even offset.
    const at = wide ? this.arenaUsed + this.arenaUsed % 2 : this.arenaUsed;
    const need = at + (wide ? 2 * value.length : value.length);
    if (need > this.arena.length) {
      this.arena = grown(this.arena, Math.max(need, this.arena.length * 2));
    }
    const units = this.#units(at, value.length, wide);
    for (let i = 0; i < value.length; i++) units[i] = value.charCodeAt(i);
    this.arenaUsed = need;
    this.text[t] = at;
    this.text[t + 1] = wide ? (value.length | WIDE) >>> 0 : value.length;
  }

  /** The code units of a text in the arena, one or two bytes each. */
  #units(at: number, length: number, wide: boolean): Uint8Array | Uint16Array {
    return wide
      ? new Uint16Array(this.arena.buffer, at, length)
      : this.arena.subarray(at, at + length);
  }

  /** Whether the arena holds `value` where a text field says (`word`: its length and width). */
  #holds(at: number, word: number, value: string): boolean {
    const length = word & ~WIDE;
    if (length !== value.length) return false;
    const units = this.#units(at, length, (word & WIDE) !== 0);
    for (let i = 0; i < length; i++) if (units[i] !== value.charCodeAt(i)) return false;
    return true;
  }

  /** A text field of `slot`, code unit for code unit as set (lone surrogates included). */
  textOf(slot: number, field: TextField): string {
    const t = (slot * TEXT_FIELDS + field) * 2;
    const word = this.text[t + 1];
    const units = this.#units(this.text[t], word & ~WIDE, (word & WIDE) !== 0);
    if (units.length <= CHUNK) return String.fromCharCode.apply(null, units as unknown as number[]);
    let out = "";
    for (let from = 0; from < units.length; from += CHUNK) {
      const chunk = units.subarray(from, Math.min(units.length, from + CHUNK));
      out += String.fromCharCode.apply(null, chunk as unknown as number[]);
    }
    return out;
  }

  /** Set the numbers of the latest diff capture of `slot`. */
  setDiffNumbers(slot: number, { added, removed, files }: DiffNumbers): void {
    const d = slot * DIFF_NUMBERS;
    this.diffNumbers[d] = added;
    this.diffNumbers[d + 1] = removed;
    this.diffNumbers[d + 2] = files;
  }

  /** A copy holding only what is used. */
  clone(): CardTable {
    const copy = new CardTable(0, 0);
    copy.size = this.size;
    copy.arenaUsed = this.arenaUsed;
    copy.column = this.column.slice();
    copy.flags = this.flags.slice();
    copy.lastIndex = this.lastIndex.slice();
    copy.diffNumbers = this.diffNumbers.slice();
    copy.text = this.text.slice();
    copy.arena = this.arena.slice(0, Math.max(this.arenaUsed, 1));
    return copy;
  }
}

/** The length word's bit for text of two bytes a code unit. */
const WIDE = 0x80000000;

/** Code units per `String.fromCharCode` call (its arguments are bounded). */
const CHUNK = 4096;

function grown<T extends Uint8Array | Uint16Array | Uint32Array | Float64Array>(
  array: T,
  length: number,
): T {
  const next = new (array.constructor as new (n: number) => T)(Math.max(length, 1));
  next.set(array);
  return next;
}
