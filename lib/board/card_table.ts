/**
 * The board fold's cards kept outside the JS heap: one slot per task, its numbers in typed arrays
 * and its strings (title, role, diff hash) as UTF-16 code units in one arena. A card as objects
 * cost ~505 bytes on the heap (a map entry, a wrapper, the card, its strings, its diff twice) and
 * grew V8's young generation by ~17 MB while a 100 000-row journal was folded; a slot costs ~60
 * bytes off the heap (docs/performance.md, "Tenth round"). Pure data: the fold (./fold.ts) says
 * what a row does to it.
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

/** Slots of tasks: typed arrays grown by doubling, and the arena of their text. */
export class CardTable {
  size = 0;
  /** 0: no card (the task has only a diff capture); else 1 + its column's index in COLUMNS. */
  column: Uint8Array;
  flags: Uint8Array;
  lastIndex: Float64Array;
  /** added, removed, files of the latest diff capture, three per slot. */
  diffNumbers: Float64Array;
  /** Start and length in {@link arena} of each text field, six per slot. */
  text: Uint32Array;
  arena: Uint16Array;
  arenaUsed = 0;

  constructor(capacity = 64, arenaCapacity = 4096) {
    this.column = new Uint8Array(capacity);
    this.flags = new Uint8Array(capacity);
    this.lastIndex = new Float64Array(capacity);
    this.diffNumbers = new Float64Array(capacity * DIFF_NUMBERS);
    this.text = new Uint32Array(capacity * TEXT_FIELDS * 2);
    this.arena = new Uint16Array(arenaCapacity);
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
    const need = this.arenaUsed + value.length;
    if (need > this.arena.length) {
      this.arena = grown(this.arena, Math.max(need, this.arena.length * 2));
    }
    const arena = this.arena;
    const at = this.arenaUsed;
    for (let i = 0; i < value.length; i++) arena[at + i] = value.charCodeAt(i);
    this.arenaUsed = need;
    const t = (slot * TEXT_FIELDS + field) * 2;
    this.text[t] = at;
    this.text[t + 1] = value.length;
  }

  /** A text field of `slot`, code unit for code unit as set (lone surrogates included). */
  textOf(slot: number, field: TextField): string {
    const t = (slot * TEXT_FIELDS + field) * 2;
    const at = this.text[t], end = at + this.text[t + 1];
    let out = "";
    for (let from = at; from < end; from += CHUNK) {
      const units = this.arena.subarray(from, Math.min(end, from + CHUNK));
      out += String.fromCharCode.apply(null, units as unknown as number[]);
    }
    return out;
  }

  /** Set the numbers of the latest diff capture of `slot`. */
  setDiffNumbers(slot: number, added: number, removed: number, files: number): void {
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
