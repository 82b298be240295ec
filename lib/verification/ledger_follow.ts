/**
 * The verification ledger followed as it grows: each read parses only the lines appended since
 * the one before (the ledger is append-only, lib/verification/ledger.ts), into a
 * {@link LedgerTally}. A ledger moved aside (`service verification reset`), shortened or rewritten
 * — the bytes before the last read's end no longer those it read — is read again from its start.
 */
import { LedgerTally } from "./ledger_tally.ts";

/** Bytes before the last read's end compared on the next read, to notice a rewrite. */
const CHECKED_BYTES = 64;
const NEWLINE = 0x0a;

/** One ledger file's records so far. */
export class LedgerFollower {
  #identity = "";
  /** Where the last complete line read ends. */
  #offset = 0;
  /** The bytes just before `#offset`, as read. */
  #tail = new Uint8Array(0);
  #tally = new LedgerTally();
  /** Reads one at a time: each starts where the one before ended. */
  #reading: Promise<unknown> = Promise.resolve();

  constructor(readonly path: string) {}

  /** The tally of the ledger as it is now (empty when there is no ledger). */
  read(): Promise<LedgerTally> {
    const next = this.#reading.then(() => this.#readNow());
    this.#reading = next.catch(() => {});
    return next;
  }

  async #readNow(): Promise<LedgerTally> {
    let file: Deno.FsFile;
    try {
      file = await Deno.open(this.path, { read: true });
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
      this.#reset("");
      return this.#tally;
    }
    try {
      const info = await file.stat();
      const identity = `${info.dev}:${info.ino}`;
      if (identity !== this.#identity || info.size < this.#offset) this.#reset(identity);
      let from = this.#offset - this.#tail.length;
      let bytes = await readRange(file, from, info.size);
      if (!startsWith(bytes, this.#tail)) {
        this.#reset(identity);
        from = 0;
        bytes = await readRange(file, 0, info.size);
      }
      const skip = this.#offset - from;
      const end = bytes.lastIndexOf(NEWLINE) + 1; // a line still being written waits
      if (end > skip) {
        this.#tally.addLines(new TextDecoder().decode(bytes.subarray(skip, end)).split("\n"));
        this.#offset = from + end;
        this.#tail = bytes.slice(Math.max(0, end - CHECKED_BYTES), end);
      }
      return this.#tally;
    } finally {
      file.close();
    }
  }

  #reset(identity: string): void {
    this.#identity = identity;
    this.#offset = 0;
    this.#tail = new Uint8Array(0);
    this.#tally = new LedgerTally();
  }
}

/** The bytes of `file` from `from` to `to` (fewer if it ends sooner). */
async function readRange(file: Deno.FsFile, from: number, to: number): Promise<Uint8Array> {
  const out = new Uint8Array(Math.max(0, to - from));
  await file.seek(from, Deno.SeekMode.Start);
  let at = 0;
  while (at < out.length) {
    const n = await file.read(out.subarray(at));
    if (n === null) break;
    at += n;
  }
  return out.subarray(0, at);
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}
