/**
 * The journal on disk: locked reads, locked appends that resume from the verified head.
 * Appends from any process take an exclusive lock, re-read the head under it and write whole
 * lines, so the chain never forks; the bytes are synced before an append returns, and an append
 * that fails (a full disk) leaves the file byte for byte as it was.
 */
import { encodeRow, type JournalEvent, type JournalRow } from "./row.ts";
import {
  type ByteSource,
  IncrementalJournal,
  type JournalSnapshot,
  NO_SINK,
  type ReadOptions,
  type RowSink,
} from "./incremental.ts";
import type { ChainFault } from "./verify.ts";
import { appendUnderLock } from "../util/locked_append.ts";

/** The chain is broken: appending would extend an unverifiable history. */
export class JournalPoisonedError extends Error {
  constructor(readonly path: string, readonly fault: ChainFault) {
    super(
      `journal ${path} does not verify (${fault.message}); refusing to append. ` +
        "Run `service doctor` to see the damage; journals are never repaired automatically.",
    );
    this.name = "JournalPoisonedError";
  }
}

/** A row that was appended, with its assigned `seq` and hash. */
export interface AppendedRow {
  seq: number;
  hash: string;
  row: JournalRow;
}

/** Options of {@link appendEventsWith}. */
export interface AppendOptions {
  /** Wall clock for the `ts` envelope (tests pin it). */
  now?: () => Date;
  /** Runs under the lock when the rows could not be written (the file is as it was). */
  onWriteFailed?: () => Promise<void>;
}

/** Options of {@link appendEvents}. */
export interface InLineOptions {
  /**
   * An earlier append of the same writer: these rows take their place in line at once, but are
   * written only if it succeeded (its failure is theirs), so a failed append leaves no hole
   * that later rows of the same writer close over.
   */
  after?: Promise<unknown>;
}

/** Builds the events to append from the verified snapshot, under the lock; throw to abort. */
export type EventBuilder<S> = (
  snapshot: JournalSnapshot<S>,
) => JournalEvent[] | Promise<JournalEvent[]>;

// The file is read through small reused buffers (lib/journal/incremental.ts), never held whole:
// a 40 MB journal costs 1 MiB of buffer, not 40 MB a process then keeps. The reads are
// synchronous: each is a copy from the page cache that an asynchronous read would hand to
// another thread and back (a 40 MB first read spent 40-50 ms on those hops, 10 ms without).
function readIntoView<S>(
  file: Deno.FsFile,
  view: IncrementalJournal<S>,
  options: ReadOptions = {},
): JournalSnapshot<S> {
  return view.read(fileSource(file, file.statSync().size), options);
}

/** An open file as a {@link ByteSource} of `size` bytes, read synchronously in place. */
export function fileSource(file: Deno.FsFile, size: number): ByteSource {
  let offset = -1;
  return {
    size,
    readAt(position, into) {
      if (position !== offset) file.seekSync(position, Deno.SeekMode.Start);
      const n = file.readSync(into) ?? 0;
      offset = position + n;
      return n;
    },
  };
}

// This process's own lock requests per path are serialised (lib/async/serialised.ts) so a
// burst of appends waits on a promise chain rather than on parked threads.

/**
 * Read a journal under a shared lock into `view` and return the snapshot. A missing file is an
 * empty journal.
 */
export async function readJournal<S>(
  path: string,
  view: IncrementalJournal<S>,
  options: ReadOptions = {},
): Promise<JournalSnapshot<S>> {
  let file: Deno.FsFile;
  try {
    // Not in place: a read-only open of a FIFO left at the journal's path would wait for a writer.
    file = await Deno.open(path, { read: true });
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return view.update(new Uint8Array(0));
    throw e;
  }
  try {
    await file.lock(false);
    return readIntoView(file, view, options);
  } finally {
    file.close();
  }
}

const appendViews = new Map<string, IncrementalJournal<null>>();

/** How many journals keep an incremental view (and their bytes) per cache. */
export const MAX_CACHED_JOURNALS = 16;

/** The cached incremental view of `path` in `views`, created with `sink` on first use. */
export function viewFor<S>(
  path: string,
  views: Map<string, IncrementalJournal<S>>,
  sink: RowSink<S>,
) {
  let view = views.get(path);
  if (view) {
    views.delete(path); // most recently used last
  } else {
    view = new IncrementalJournal(sink);
    // Each view keeps its journal's bytes: bound how many are kept (least recently used go).
    while (views.size >= MAX_CACHED_JOURNALS) {
      const oldest = views.keys().next().value!;
      views.delete(oldest);
    }
  }
  views.set(path, view);
  return view;
}

/**
 * Append `events` as consecutive rows. Refuses (JournalPoisonedError) when the existing chain
 * does not verify. Returns only after the bytes are synced to disk.
 *
 * Group commit: the appends this process asks for while an earlier one holds the journal go
 * in line, and the next turn writes every one of them under one lock, in one write and one sync
 * (a run's rows came one by one — 350 appends for 50 tasks, each a lock, a read of the head and
 * a sync, one after another). Each keeps its place and its own outcome: an append whose `after`
 * failed is left out with that failure, and a write that fails fails every append of its turn,
 * none of whose rows is then in the file.
 */
export function appendEvents(
  path: string,
  events: JournalEvent[],
  options: InLineOptions = {},
): Promise<AppendedRow[]> {
  let settle!: Pick<InLine, "resolve" | "reject">;
  const promise = new Promise<AppendedRow[]>((resolve, reject) => settle = { resolve, reject });
  const entry: InLine = { events, after: options.after, promise, ...settle };
  inLine.set(promise, entry);
  const line = lines.get(path) ?? [];
  lines.set(path, line);
  line.push(entry);
  if (line.length === 1 && !turns.has(path)) turns.set(path, takeTurns(path));
  return promise;
}

/** An append waiting for its turn. */
interface InLine {
  events: JournalEvent[];
  after?: Promise<unknown>;
  promise: Promise<AppendedRow[]>;
  resolve: (rows: AppendedRow[]) => void;
  reject: (e: unknown) => void;
  /** How it ended once its turn came: written, or the failure that is its own. */
  outcome?: { ok: true } | { ok: false; error: unknown };
}

/** Appends through {@link appendEvents}'s line and the writes they took, by journal path. */
const counts = new Map<string, { appends: number; turns: number }>();

/** How many appends to `path` went through the line, in how many writes (tests, benchmarks). */
export function groupCommitCounts(path: string): { appends: number; turns: number } {
  return { ...(counts.get(path) ?? { appends: 0, turns: 0 }) };
}

/** Appends asked for and not yet taken, by journal path. */
const lines = new Map<string, InLine[]>();
/** The journals whose appends are being written. */
const turns = new Map<string, Promise<void>>();
/** Every append in line or written, by the promise it returned (a later one's `after`). */
const inLine = new WeakMap<Promise<unknown>, InLine>();

/** Write `path`'s appends, every one in line at each turn together, until none is left. */
async function takeTurns(path: string): Promise<void> {
  try {
    for (let line = lines.get(path); line?.length; line = lines.get(path)) {
      lines.delete(path);
      await writeTurn(path, line);
    }
  } finally {
    turns.delete(path);
  }
}

/** One lock, one write, one sync for `group`; each append settles with its own outcome. */
async function writeTurn(path: string, group: InLine[]): Promise<void> {
  const count = counts.get(path) ?? { appends: 0, turns: 0 };
  counts.delete(path); // most recently written last; a long-lived server keeps the last few
  counts.set(path, { appends: count.appends + group.length, turns: count.turns + 1 });
  if (counts.size > MAX_CACHED_JOURNALS) counts.delete(counts.keys().next().value!);
  // The appends written in this turn, in order: a later one's `after` may be among them.
  const taken = new Set<InLine>();
  try {
    const rows = await appendEventsWith(
      path,
      viewFor(path, appendViews, NO_SINK),
      async () => {
        const events: JournalEvent[] = [];
        for (const entry of group) {
          const failure = await failureBefore(entry, taken);
          if (failure) {
            entry.outcome = failure;
            continue;
          }
          taken.add(entry);
          events.push(...entry.events);
        }
        return events;
      },
    );
    let at = 0;
    for (const entry of taken) {
      entry.outcome = { ok: true };
      entry.resolve(rows.slice(at, at += entry.events.length));
    }
  } catch (error) {
    for (const entry of group) {
      if (!entry.outcome || taken.has(entry)) entry.outcome = { ok: false, error };
    }
  }
  for (const entry of group) if (entry.outcome?.ok === false) entry.reject(entry.outcome.error);
}

/**
 * The failure `entry` inherits from its `after`, if any: an earlier append of this turn that was
 * left out, or of an earlier turn that failed; any other promise is waited for, under the lock.
 */
async function failureBefore(
  entry: InLine,
  taken: Set<InLine>,
): Promise<{ ok: false; error: unknown } | undefined> {
  if (!entry.after) return undefined;
  const earlier = inLine.get(entry.after);
  if (earlier && taken.has(earlier)) return undefined; // written with this turn, or not at all
  if (earlier?.outcome) return earlier.outcome.ok ? undefined : earlier.outcome;
  try {
    await entry.after;
    return undefined;
  } catch (error) {
    return { ok: false, error };
  }
}

/**
 * Append the events `build` returns, holding the exclusive lock from the read of the head to
 * the sync of the new rows: `build` sees exactly the verified state the rows will chain onto
 * (folded by `view`), and nothing is written when it throws or the chain does not verify.
 */
export function appendEventsWith<S>(
  path: string,
  view: IncrementalJournal<S>,
  build: EventBuilder<S>,
  options: AppendOptions = {},
): Promise<AppendedRow[]> {
  return appendUnderLock(path, async (file) => {
    const snapshot = readIntoView(file, view);
    const walker = snapshot.walker;
    if (walker.firstFault) throw new JournalPoisonedError(path, walker.firstFault);
    const events = await build(snapshot);
    const now = options.now ?? (() => new Date());
    let prev = walker.head;
    let seq = walker.cursor.nextSeq;
    const appended: AppendedRow[] = [];
    let text = snapshot.endsWithNewline ? "" : "\n";
    for (const event of events) {
      const encoded = encodeRow(event, { prev, seq, ts: now().toISOString() });
      appended.push({ seq, hash: encoded.hash, row: encoded.row });
      text += encoded.line + "\n";
      prev = encoded.hash;
      seq++;
    }
    const append = appended.length > 0 ? new TextEncoder().encode(text) : undefined;
    return { append, result: appended, onWriteFailed: options.onWriteFailed };
  });
}
