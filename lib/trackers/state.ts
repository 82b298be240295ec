/**
 * Per-tracker runtime facts kept in `.sdd/runtime/trackers.json`: `last_processed_ts` (the
 * newest ticket update fed to the sink), `last_polled_ts` (the newest a poll fed: the cursor of
 * polls and of the boot replay), the last
 * poll and the last webhook delivery with their outcomes (`integrations list` shows them).
 * Deliveries can arrive thousands a second, so writes are coalesced: at most one atomic
 * rewrite per `flushMs`, and one on close.
 */
import { dirname } from "node:path";
import { writeFileAtomic } from "../util/atomic_write.ts";

/** One event's outcome as remembered. */
export interface OutcomeRecord {
  at: string;
  /** `accepted`, `replay`, an error code, `ok` or `failed`. */
  outcome: string;
  /** HTTP status of a delivery. */
  status?: number;
  delivery_id?: string;
  detail?: string;
}

/** What is known about one tracker. */
export interface TrackerRuntime {
  last_processed_ts?: string;
  /**
   * The newest ticket update a poll fed: the cursor of the next poll. Webhooks do not move it,
   * so a change whose delivery was lost is still seen by the poll after a later delivery.
   */
  last_polled_ts?: string;
  last_poll?: OutcomeRecord;
  last_delivery?: OutcomeRecord;
  /** The last write-back comment (`comment_on_land`). */
  last_comment?: OutcomeRecord;
  /** The last ticket move (`move_to`): `moved`, `already`, `left`, `pending`, `failed`, `refused`. */
  last_move?: OutcomeRecord;
}

/** The whole file. */
export type TrackerRuntimeFile = Record<string, TrackerRuntime>;

/** Read the file (empty when missing or unreadable: it is advisory, never authoritative). */
export async function readTrackerRuntime(path: string): Promise<TrackerRuntimeFile> {
  try {
    const value = JSON.parse(await Deno.readTextFile(path));
    return value && typeof value === "object" && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}

/** The runtime facts of every tracker, written back in the background. */
export class TrackerRuntimeStore {
  readonly #path: string;
  readonly #flushMs: number;
  #data: TrackerRuntimeFile;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #writing: Promise<void> = Promise.resolve();

  private constructor(path: string, data: TrackerRuntimeFile, flushMs: number) {
    this.#path = path;
    this.#data = data;
    this.#flushMs = flushMs;
  }

  /** Open the store at `path` (the file need not exist). */
  static async open(path: string, flushMs = 500): Promise<TrackerRuntimeStore> {
    return new TrackerRuntimeStore(path, await readTrackerRuntime(path), flushMs);
  }

  /** The facts of `tracker` (a copy). */
  get(tracker: string): TrackerRuntime {
    return { ...this.#data[tracker] };
  }

  /** Merge `patch` into the facts of `tracker`; `last_processed_ts` only moves forward. */
  update(tracker: string, patch: TrackerRuntime): void {
    const current = this.#data[tracker] ?? {};
    const next = { ...current, ...patch };
    if (
      current.last_processed_ts && patch.last_processed_ts &&
      patch.last_processed_ts < current.last_processed_ts
    ) next.last_processed_ts = current.last_processed_ts;
    this.#data[tracker] = next;
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined;
      this.#writing = this.#writing.then(() => this.#write());
    }, this.#flushMs);
  }

  /** Write pending changes now and stop the timer. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
      this.#writing = this.#writing.then(() => this.#write());
    }
    await this.#writing;
  }

  async #write(): Promise<void> {
    try {
      await Deno.mkdir(dirname(this.#path), { recursive: true });
      await writeFileAtomic(this.#path, JSON.stringify(this.#data, null, 2) + "\n");
    } catch (e) {
      // A StorageFullError names the file itself; other errors get it named here.
      const message = (e as Error).message;
      console.error(
        message.includes(this.#path) ? message : `cannot write ${this.#path}: ${message}`,
      );
    }
  }
}
