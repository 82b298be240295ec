/**
 * The projection receipt (spec §2.3): the board folded from a run's journal, its hash, the
 * journal head and the result of re-walking the whole chain at request time.
 */
import { canonicalJson } from "../journal/canonical_json.ts";
import { createHash } from "node:crypto";
import { IncrementalJournal, type JournalSnapshot } from "../journal/incremental.ts";
import type { ChainFault } from "../journal/verify.ts";
import type { JsonValue } from "../journal/canonical_json.ts";
import { MAX_CACHED_JOURNALS, readJournal, viewFor } from "../journal/journal_file.ts";
import {
  type FileIdentity,
  fileIdentity,
  sameIdentity,
  settledBefore,
} from "../journal/file_identity.ts";
import { LATER_DIGEST_MIN_BYTES, takeDigestLater } from "../journal/later_digest.ts";
import { releaseHeap } from "../util/heap_release.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";
import { boardOf, columnCounts, type FoldState } from "./fold.ts";
import { type BoardBytes, boardBytes } from "./board_bytes.ts";
import type { ProjectionReceipt } from "./types.ts";

/** The receipt's members but the board, in the order the review route's JSON names them. */
export type ReceiptHead = Omit<ProjectionReceipt, "board">;

/** A receipt plus what the server needs but does not serve. */
export interface Projection {
  receipt: ReceiptHead;
  /**
   * Canonical JSON of the board as bytes, in parts (hashed into `projection_hash`; served as they
   * are between the receipt's other members, never joined into one buffer).
   */
  board: BoardBytes;
  /** The first bad row when the chain does not verify. */
  fault?: ChainFault;
  /** Next `seq` an append would take (when verified). */
  nextSeq: number;
  /**
   * The fold state the board was written from (read by {@link boardAsFolded} and the diff
   * route). A later read of the grown journal folds more rows into it; it never changes otherwise.
   */
  state: FoldState;
}

/** Build the receipt from a journal snapshot (pure). */
export function receiptOf(runId: string, snapshot: JournalSnapshot<FoldState>): Projection {
  const board = boardBytes(snapshot.state);
  const walker = snapshot.walker;
  return {
    receipt: {
      run_id: runId,
      projection_hash: board.sha256,
      journal_head: walker.lastHash,
      journal_verified: walker.verified,
      event_count: snapshot.state.eventCount,
    },
    board,
    fault: walker.firstFault,
    nextSeq: walker.cursor.nextSeq,
    state: snapshot.state,
  };
}

/**
 * The receipt with its board as objects (what a review action answers beside its own receipt),
 * or undefined once more rows were folded into the projection's state since it was written.
 */
export function boardAsFolded(projection: Projection): ProjectionReceipt | undefined {
  const { receipt, state } = projection;
  // The state only ever grows by rows, each counted: the same count is the same state.
  if (state.eventCount !== receipt.event_count) return undefined;
  return {
    run_id: receipt.run_id,
    board: boardOf(state),
    projection_hash: receipt.projection_hash,
    journal_head: receipt.journal_head,
    journal_verified: receipt.journal_verified,
    event_count: receipt.event_count,
  };
}

/** The receipt as served: its canonical JSON bytes, in parts, and their entity tag. */
export interface ServedReceipt {
  /** The bytes in order: the receipt's members around the board's parts (shared, not copied). */
  parts: Uint8Array<ArrayBuffer>[];
  length: number;
  /**
   * Strong tag over the exact bytes (the board, its head and verdict all change it): SHA-256 of
   * the members around the board, which name the board's own SHA-256 (`projection_hash`).
   */
  etag: string;
}

/** The canonical JSON bytes of a receipt, with the board's bytes reused rather than copied. */
export function servedReceipt(projection: Projection): ServedReceipt {
  const { receipt, board } = projection;
  const encoder = new TextEncoder();
  const before = encoder.encode(`{"board":`);
  const after = encoder.encode(
    `,"event_count":${receipt.event_count},` +
      `"journal_head":${canonicalJson(receipt.journal_head)},` +
      `"journal_verified":${receipt.journal_verified},` +
      `"projection_hash":${canonicalJson(receipt.projection_hash)},` +
      `"run_id":${canonicalJson(receipt.run_id)}}`,
  );
  // `projection_hash` (in the last part) is the SHA-256 of the board's bytes, so a digest of the
  // parts around them changes with any byte served; the board is not hashed a second time.
  const digest = createHash("sha256").update(before).update(after);
  return {
    parts: [before, ...board.parts, after],
    length: before.length + board.length + after.length,
    etag: `"${digest.digest("hex")}"`,
  };
}

const boardViews = new Map<string, IncrementalJournal<FoldState>>();

/** What the runs list shows of a journal (everything but the run's liveness). */
export interface JournalSummary {
  event_count: number;
  journal_head: string;
  journal_verified: boolean;
  started: JsonValue | null;
  completed: JsonValue | null;
  /** Cards per board column. */
  counts: Record<string, number>;
  /** `ts` of the first row (runs are listed newest first by it). */
  firstTs: string;
}

function summaryOf(snapshot: JournalSnapshot<FoldState>, firstTs: string): JournalSummary {
  const { walker, state } = snapshot;
  return {
    event_count: state.eventCount,
    journal_head: walker.lastHash,
    journal_verified: walker.verified,
    started: state.started,
    completed: state.completed,
    counts: columnCounts(state),
    firstTs,
  };
}

// Summaries are small, so every journal's is kept (bounded) beside the few full projections:
// listing runs re-reads only journals whose identity changed since they were summarised.
const summaries = new Map<
  string,
  { identity: FileIdentity; runId: string; summary: JournalSummary }
>();
const MAX_SUMMARIES = 4096;

function keepSummary(path: string, runId: string, identity: FileIdentity, summary: JournalSummary) {
  summaries.delete(path);
  summaries.set(path, { identity, runId, summary });
  while (summaries.size > MAX_SUMMARIES) summaries.delete(summaries.keys().next().value!);
}

/**
 * The runs-list summary of a journal: from its identity when unchanged; else, for a journal that
 * has settled and is not on a board, folded once on the side — listing many runs must not push
 * the few boards being looked at out of the projection cache (a 40 MB one would be folded
 * again); else from its incremental projection, as a live run's journal is.
 */
export async function journalSummary(runId: string, journalPath: string): Promise<JournalSummary> {
  const statAt = Date.now();
  const identity = await fileIdentity(journalPath);
  if (!identity) throw new Deno.errors.NotFound(journalPath);
  const hit = summaries.get(journalPath);
  if (hit && hit.runId === runId && sameIdentity(hit.identity, identity)) return hit.summary;
  if (!memo.has(journalPath) && settledBefore(identity, statAt)) {
    // Read once and dropped: the fingerprint that would let it be read again is never needed.
    const snapshot = await readJournal(journalPath, new IncrementalJournal(BOARD_FOLD_SINK), {
      digestLater: true,
    });
    const summary = summaryOf(snapshot, await firstRowTs(journalPath));
    if (snapshot.byteLength === identity.size) keepSummary(journalPath, runId, identity, summary);
    return summary;
  }
  const entry = await memoised(runId, journalPath);
  return entry.summary ?? summaryOf(entry.snapshot, await firstRowTs(journalPath));
}

async function firstRowTs(path: string): Promise<string> {
  const file = await Deno.open(path);
  try {
    const buffer = new Uint8Array(8192);
    const n = (await file.read(buffer)) ?? 0;
    const line = new TextDecoder().decode(buffer.subarray(0, n)).split("\n")[0];
    return /"ts":"([^"]*)"/.exec(line)?.[1] ?? "";
  } finally {
    file.close();
  }
}

interface Memo {
  /** Set when the identity settled (then also kept in `summaries`). */
  summary?: JournalSummary;
  snapshot: JournalSnapshot<FoldState>;
  version: number;
  runId: string;
  projection: Projection;
  /** The file as stat saw it when read, once its last change had settled (see below). */
  identity?: FileIdentity;
  served?: ServedReceipt;
}
const memo = new Map<string, Memo>();

/** How long after a large first read fingerprinted in line its heap is handed back. */
const RELEASE_AFTER_MS = 100;

/** Work first reads left for after their answers (fingerprints, the heap's release). */
const afterAnswers = new Set<Promise<void>>();

/** Once `first` is done, hand back the heap a large first read grew; tracked until then. */
function afterAnswer(first: Promise<unknown>): void {
  const work: Promise<void> = first
    .then(() => void releaseHeap())
    .finally(() => afterAnswers.delete(work));
  afterAnswers.add(work);
}

/** Resolves once the work first reads left for after their answers is done (tests wait on it). */
export async function afterAnswersDone(): Promise<void> {
  while (afterAnswers.size > 0) await Promise.all([...afterAnswers]);
}

/**
 * Project the journal at `journalPath`. A journal whose identity (device, inode, size, mtime,
 * ctime) is what it was when last read, and whose last change was already over a second old
 * then, is not read again: any later write sets a newer ctime, which no process can set back.
 * Otherwise it is read under a shared lock — incrementally when it only grew, and the previous
 * answer itself when its bytes did not change at all.
 */
export async function projectJournal(runId: string, journalPath: string): Promise<Projection> {
  return (await memoised(runId, journalPath)).projection;
}

/** {@link projectJournal} plus the receipt's bytes as served (built once per journal version). */
export async function projectJournalServed(
  runId: string,
  journalPath: string,
): Promise<{ projection: Projection; served: ServedReceipt }> {
  const entry = await memoised(runId, journalPath);
  entry.served ??= servedReceipt(entry.projection);
  return { projection: entry.projection, served: entry.served };
}

/**
 * The receipt of the journal at `journalPath` with its board as objects, from one fold: read
 * again if another read folded more rows into the state between the fold and this answer.
 */
export async function projectJournalAsFolded(
  runId: string,
  journalPath: string,
): Promise<ProjectionReceipt> {
  for (let attempt = 0;; attempt++) {
    const receipt = boardAsFolded(await projectJournal(runId, journalPath));
    if (receipt) return receipt;
    if (attempt === 3) throw new Error(`the journal of run ${runId} kept growing while read`);
  }
}

async function memoised(runId: string, journalPath: string): Promise<Memo> {
  const cached = memo.get(journalPath);
  const statAt = Date.now();
  const identity = await fileIdentity(journalPath);
  if (
    cached && cached.runId === runId && identity && cached.identity &&
    sameIdentity(cached.identity, identity)
  ) {
    return remember(journalPath, cached);
  }
  // A large journal that had settled before this read is fingerprinted after the answer
  // (lib/journal/later_digest.ts); every row is verified and the chain checked either way.
  const digestLater = identity !== undefined && identity.size >= LATER_DIGEST_MIN_BYTES &&
    settledBefore(identity, statAt);
  const view = viewFor(journalPath, boardViews, BOARD_FOLD_SINK);
  const snapshot = await readJournal(journalPath, view, { digestLater });
  const settled = identity && snapshot.byteLength === identity.size &&
      settledBefore(identity, statAt)
    ? identity
    : undefined;
  // Then the young generation the fold grew goes back to the system (lib/util/heap_release.ts).
  if (digestLater && settled) afterAnswer(takeDigestLater(journalPath, view, settled));
  else if (!cached && identity !== undefined && identity.size >= LATER_DIGEST_MIN_BYTES) {
    // Fingerprinted as it was read (it had changed within the last second): the heap is handed
    // back all the same, once the answer has had time to leave.
    afterAnswer(new Promise<void>((r) => setTimeout(r, RELEASE_AFTER_MS)));
  }
  const entry: Memo = cached && cached.version === snapshot.version && cached.runId === runId
    ? cached
    : { version: snapshot.version, runId, snapshot, projection: receiptOf(runId, snapshot) };
  entry.identity = settled;
  // Kept as soon as the identity settles — also when that happens on a later read of unchanged
  // bytes — so listing runs never re-folds a large journal whose projection was evicted.
  if (settled) {
    entry.summary ??= summaryOf(entry.snapshot, await firstRowTs(journalPath));
    keepSummary(journalPath, runId, settled, entry.summary);
  }
  return remember(journalPath, entry);
}

function remember(journalPath: string, entry: Memo): Memo {
  memo.delete(journalPath); // most recently used last
  memo.set(journalPath, entry);
  while (memo.size > MAX_CACHED_JOURNALS) memo.delete(memo.keys().next().value!);
  return entry;
}
