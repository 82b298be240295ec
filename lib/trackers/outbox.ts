/**
 * The write-back outbox, `.sdd/runtime/tracker_outbox.json`: every landing comment
 * (`comment_on_land`) is written here, synced, before the tracker is called, and marked sent once
 * the tracker accepted it; a failed call is retried with back-off ({@link nextCommentTry}, pure),
 * also after a restart. One entry per landing (its key), so a landing is commented on once.
 * The gaps left are a kill between the tracker accepting a comment and the file saying so: that
 * comment is posted again after the restart (the tracker APIs offer no idempotency key); and a
 * kill in the milliseconds between a task closing and its entry being written: it is not sent.
 */
import { join } from "node:path";
import type { WorkspacePaths } from "../workspace.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import type { TicketRef } from "./ticket.ts";
import type { TicketMove } from "./move.ts";

/** One landing comment, or one ticket move (`move`). */
export interface OutboxEntry {
  /**
   * `<tracker>/<task id>/<task revision at landing>`: one landing;
   * `<tracker>/<task id>/move/<event>/<session or revision>`: one move.
   */
  key: string;
  tracker: string;
  task_id: string;
  /** The task's run (a move's outcome is journaled there). */
  run_id?: string;
  /** The ticket's ref and ids (where the comment goes, and the project check). */
  ref: string;
  ids: TicketRef;
  /** The comment (empty for a move). */
  text: string;
  /** A move of the ticket to a workflow state instead of a comment (lib/trackers/move.ts). */
  move?: TicketMove;
  landed_at: string;
  state: "pending" | "sent" | "abandoned";
  /** Calls made so far. */
  attempts: number;
  /** When to call next (pending entries). */
  next_at: string;
  last_error?: string;
  /** When it was sent or abandoned. */
  done_at?: string;
}

/** The file's shape. */
interface OutboxFile {
  version: 1;
  entries: OutboxEntry[];
}

/** Where the outbox lives. */
export function outboxPath(paths: WorkspacePaths): string {
  return join(paths.runtime, "tracker_outbox.json");
}

/** First retry delay; each later failure doubles it, up to {@link MAX_RETRY_DELAY_MS}. */
export const FIRST_RETRY_DELAY_MS = 30_000;
/** Longest wait between two tries. */
export const MAX_RETRY_DELAY_MS = 30 * 60_000;
/** A tracker that keeps failing (down, 5xx, 429) is given up on this long after the landing. */
export const GIVE_UP_AFTER_MS = 7 * 24 * 3600_000;
/** A tracker that keeps refusing (401, 403, 404, 422) is given up on after this many tries. */
export const MAX_REFUSED_TRIES = 5;

/** What a failed call said. */
export interface CommentFailure {
  /** Worth retrying as is (network, timeout, 429, 5xx) rather than needing a fix. */
  retryable: boolean;
  /** The tracker's Retry-After, in ms. */
  retryAfterMs?: number;
}

/** What to do after a failed try: call again at `atMs`, or give up and why. */
export type CommentVerdict = { retry: true; atMs: number } | { retry: false; reason: string };

/**
 * After the `attempts`-th failed try of an entry that landed at `landedMs` (pure): wait 30 s,
 * doubling per failure up to 30 min and never before Retry-After; give up 7 days after the
 * landing, or after 5 refusals (a token can be fixed meanwhile; a deleted ticket cannot).
 */
export function nextCommentTry(
  o: { attempts: number; landedMs: number; nowMs: number; firstDelayMs?: number },
  failure: CommentFailure,
): CommentVerdict {
  if (!failure.retryable && o.attempts >= MAX_REFUSED_TRIES) {
    return { retry: false, reason: `the tracker refused it ${o.attempts} times` };
  }
  if (o.nowMs - o.landedMs >= GIVE_UP_AFTER_MS) {
    return { retry: false, reason: "the tracker could not be reached for 7 days" };
  }
  const first = o.firstDelayMs ?? FIRST_RETRY_DELAY_MS;
  const delay = Math.max(
    Math.min(MAX_RETRY_DELAY_MS, first * 2 ** Math.min(Math.max(o.attempts - 1, 0), 20)),
    failure.retryAfterMs ?? 0,
  );
  return { retry: true, atMs: o.nowMs + delay };
}

/** Finished entries are kept this long (their keys keep a landing from being commented twice). */
const KEEP_DONE_MS = 30 * 24 * 3600_000;

/** The outbox file, read once and rewritten atomically (synced) on every change. */
export class Outbox {
  readonly #path: string;
  #entries: OutboxEntry[];
  #writing: Promise<void> = Promise.resolve();

  private constructor(path: string, entries: OutboxEntry[]) {
    this.#path = path;
    this.#entries = entries;
  }

  /** Open the outbox at `path` (missing: empty; unreadable: an error naming the file). */
  static async open(path: string): Promise<Outbox> {
    let text: string;
    try {
      text = await Deno.readTextFile(path);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return new Outbox(path, []);
      throw e;
    }
    let file: OutboxFile;
    try {
      file = JSON.parse(text);
      if (!Array.isArray(file?.entries)) throw new Error("no entries list");
    } catch (e) {
      throw new Error(
        `${path} is not a tracker outbox (${(e as Error).message}); move it aside to start ` +
          "an empty one (its pending comments are then not sent)",
      );
    }
    return new Outbox(path, file.entries);
  }

  /** Pending entries, soonest first. */
  pending(): OutboxEntry[] {
    return this.#entries.filter((e) => e.state === "pending")
      .sort((a, b) => a.next_at.localeCompare(b.next_at));
  }

  /** The entry under `key`, if any. */
  get(key: string): OutboxEntry | undefined {
    return this.#entries.find((e) => e.key === key);
  }

  /** Add `entry` durably; false (and nothing written) when its landing is already in. */
  async add(entry: OutboxEntry): Promise<boolean> {
    if (this.get(entry.key)) return false;
    this.#entries.push(entry);
    await this.#save();
    return true;
  }

  /**
   * Give up the pending moves of the ticket `kept` moves but `kept` itself (a later move replaces
   * them: a claim's move still being retried never lands after the landing's), durably.
   */
  async supersedeMoves(
    kept: Pick<OutboxEntry, "tracker" | "task_id" | "key">,
    at: string,
  ): Promise<void> {
    const keep = kept.key;
    const stale = this.#entries.filter((e) =>
      e.state === "pending" && e.move && e.tracker === kept.tracker &&
      e.task_id === kept.task_id && e.key !== keep
    );
    if (stale.length === 0) return;
    for (const e of stale) {
      Object.assign(e, { state: "abandoned", last_error: `superseded by ${keep}`, done_at: at });
    }
    await this.#save();
  }

  /** Change the entry under `key` durably. */
  async update(key: string, patch: Partial<OutboxEntry>): Promise<void> {
    const entry = this.get(key);
    if (!entry) return;
    Object.assign(entry, patch);
    await this.#save();
  }

  #save(): Promise<void> {
    const now = Date.now();
    this.#entries = this.#entries.filter((e) =>
      e.state === "pending" || now - Date.parse(e.done_at ?? e.landed_at) < KEEP_DONE_MS
    );
    const text = JSON.stringify({ version: 1, entries: this.#entries }, null, 2) + "\n";
    const write = this.#writing.catch(() => {}).then(() => writeFileAtomic(this.#path, text));
    this.#writing = write;
    return write;
  }
}
