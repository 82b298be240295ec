/**
 * The `tracker_write_back` status part (docs/trackers.md#write-back): landing comments and ticket
 * moves the tracker has not taken yet — each with its try, what the tracker said and when the next
 * try is — and those given up in the last day, read from the outbox file, so `status` says why a
 * ticket has no comment yet whether or not the service runs. An entry not tried yet is not listed.
 */
import { type OutboxEntry, outboxPath } from "../trackers/outbox.ts";
import type { StatusPart } from "./status.ts";

/** One write-back the tracker has not taken. */
export interface WriteBackWait {
  tracker: string;
  task_id: string;
  ref: string;
  /** `comment on octo/app#3`, `move PROJ-2 to "Done" (landed)`. */
  what: string;
  state: "pending" | "abandoned";
  attempts: number;
  last_error: string;
  /** The next try (pending). */
  next_at?: string;
}

/** Given-up entries are listed this long after. */
const GIVEN_UP_SHOWN_MS = 24 * 3600_000;

/** The waiting and recently given-up write-backs of an outbox file's entries (pure). */
export function writeBackWaits(entries: OutboxEntry[], nowMs: number): WriteBackWait[] {
  return entries.filter((e) =>
    (e.state === "pending" && e.attempts > 0) ||
    (e.state === "abandoned" && !(e.last_error ?? "").startsWith("superseded") &&
      nowMs - Date.parse(e.done_at ?? e.landed_at) < GIVEN_UP_SHOWN_MS)
  ).map((e) => ({
    tracker: e.tracker,
    task_id: e.task_id,
    ref: e.ref,
    what: e.move ? `move ${e.ref} to "${e.move.to}" (${e.move.event})` : `comment on ${e.ref}`,
    state: e.state as "pending" | "abandoned",
    attempts: e.attempts,
    last_error: e.last_error ?? "",
    ...(e.state === "pending" ? { next_at: e.next_at } : {}),
  }));
}

/** What `status` says of each (tracker words: the caller's palette escapes them). */
export function writeBackLines(waits: WriteBackWait[] | undefined): string[] {
  return (waits ?? []).map((w) =>
    w.state === "pending"
      ? `  ${w.tracker}: ${w.what} for ${w.task_id} waits: try ${w.attempts} failed: ` +
        `${w.last_error}; next try at ${w.next_at}`
      : `  ${w.tracker}: ${w.what} for ${w.task_id} given up after ${w.attempts} tries: ` +
        w.last_error
  );
}

/** The outbox's waiting write-backs (none without an outbox; an unreadable one is said). */
export const trackerWriteBackPart: StatusPart = async (app) => {
  const path = outboxPath(app.paths);
  let text: string;
  try {
    text = await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
  try {
    const entries = JSON.parse(text)?.entries;
    return Array.isArray(entries) ? writeBackWaits(entries, Date.now()) : [];
  } catch {
    return []; // the service itself names an unreadable outbox when it starts
  }
};
