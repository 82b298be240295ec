/**
 * The webhook replay ledger (spec §4.2 rules 4–5, §8): the last 4096 delivery keys in memory
 * (least recently used evicted first) and every accepted key appended durably to
 * `.sdd/runtime/tracker_webhook_ledger.jsonl`, reloaded on start so a replay after a restart is
 * still a replay. Keys are per adapter. A key is claimed before its delivery is processed, so of
 * many concurrent identical deliveries exactly one is accepted; the others wait for it and then
 * answer replay (or take over if it failed).
 */
import { dirname } from "node:path";
import { type JsonlRepair, repairJsonl } from "../state/repair_jsonl.ts";
import { GroupAppender } from "./group_append.ts";

/** Delivery keys kept in memory (spec §8). */
const LEDGER_CAPACITY = 4096;

/** One line of the ledger file. */
export interface LedgerEntry {
  adapter: string;
  key: string;
  /** When the delivery was accepted (ISO 8601). */
  at: string;
}

/** Options of {@link ReplayLedger.open}. */
export interface ReplayLedgerOptions {
  /** Keys kept in memory (default 4096). */
  capacity?: number;
  /** Rewrite the file down to the keys in memory after this many appends (default 4 × capacity). */
  compactAfter?: number;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
}

/** The answer to {@link ReplayLedger.claim}. */
export type Claim = "new" | "seen";

interface Pending {
  done: Promise<boolean>;
  settle: (committed: boolean) => void;
}

/** Replay protection for webhook deliveries. */
export class ReplayLedger {
  readonly #capacity: number;
  readonly #compactAfter: number;
  readonly #clock: () => number;
  readonly #lru = new Map<string, LedgerEntry>();
  readonly #pending = new Map<string, Pending>();
  readonly #file: GroupAppender;
  #appended = 0;

  private constructor(file: GroupAppender, options: ReplayLedgerOptions) {
    this.#file = file;
    this.#capacity = options.capacity ?? LEDGER_CAPACITY;
    this.#compactAfter = options.compactAfter ?? this.#capacity * 4;
    this.#clock = options.clock ?? Date.now;
  }

  /**
   * Open the ledger at `path` (created with its directory when missing). A torn or corrupt tail
   * is repaired like other JSONL state: good lines kept, the rest moved aside (`repair`).
   */
  static async open(
    path: string,
    options: ReplayLedgerOptions = {},
  ): Promise<{ ledger: ReplayLedger; repair?: JsonlRepair }> {
    await Deno.mkdir(dirname(path), { recursive: true });
    const repair = await repairJsonl(path);
    const ledger = new ReplayLedger(await GroupAppender.open(path), options);
    let text = "";
    try {
      text = await Deno.readTextFile(path);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    }
    for (const line of text.split("\n")) {
      if (line === "") continue;
      const entry = parseEntry(line);
      if (entry) ledger.#remember(entry);
    }
    return { ledger, repair: repair?.dropped ? repair : undefined };
  }

  /** Keys held in memory. */
  get size(): number {
    return this.#lru.size;
  }

  /** True when `key` of `adapter` was accepted (and is still remembered). */
  has(adapter: string, key: string): boolean {
    return this.#lru.has(slot(adapter, key));
  }

  /**
   * Claim a delivery key. `"seen"`: already accepted, answer replay. `"new"`: the caller owns it
   * and must {@link commit} it once processed or {@link release} it on failure.
   */
  async claim(adapter: string, key: string): Promise<Claim> {
    const k = slot(adapter, key);
    for (;;) {
      const known = this.#lru.get(k);
      if (known) {
        this.#lru.delete(k);
        this.#lru.set(k, known); // most recently used
        return "seen";
      }
      const pending = this.#pending.get(k);
      if (!pending) break;
      if (await pending.done) return "seen";
      // The first claimant failed: try to take over.
    }
    let settle!: (committed: boolean) => void;
    const done = new Promise<boolean>((resolve) => settle = resolve);
    this.#pending.set(k, { done, settle });
    return "new";
  }

  /** Record a claimed key durably; resolves once it is on disk. */
  async commit(adapter: string, key: string): Promise<void> {
    const k = slot(adapter, key);
    const entry: LedgerEntry = { adapter, key, at: new Date(this.#clock()).toISOString() };
    try {
      await this.#file.append(JSON.stringify(entry));
    } catch (e) {
      this.#settle(k, false);
      throw e;
    }
    this.#remember(entry);
    this.#settle(k, true);
    if (++this.#appended >= this.#compactAfter) {
      this.#appended = 0;
      this.#file.rewrite(() =>
        [...this.#lru.values()].map((e) => JSON.stringify(e) + "\n").join("")
      );
    }
  }

  /** Give up a claimed key (processing failed): a later delivery may be accepted. */
  release(adapter: string, key: string): void {
    this.#settle(slot(adapter, key), false);
  }

  /** Wait for pending appends and close the file. */
  close(): Promise<void> {
    return this.#file.close();
  }

  #settle(k: string, committed: boolean): void {
    const pending = this.#pending.get(k);
    this.#pending.delete(k);
    pending?.settle(committed);
  }

  #remember(entry: LedgerEntry): void {
    const k = slot(entry.adapter, entry.key);
    this.#lru.delete(k);
    this.#lru.set(k, entry);
    while (this.#lru.size > this.#capacity) {
      this.#lru.delete(this.#lru.keys().next().value!);
    }
  }
}

function slot(adapter: string, key: string): string {
  return `${adapter}\u0000${key}`;
}

function parseEntry(line: string): LedgerEntry | undefined {
  try {
    const v = JSON.parse(line);
    if (typeof v?.adapter === "string" && typeof v?.key === "string") {
      return { adapter: v.adapter, key: v.key, at: String(v.at ?? "") };
    }
  } catch { /* repaired on open; a line edited since is skipped */ }
  return undefined;
}
