/**
 * The projection receipt (spec §2.3): the board folded from a run's journal, its hash, the
 * journal head and the result of re-walking the whole chain at request time.
 */
import { canonicalJson } from "../journal/canonical_json.ts";
import { sha256Hex } from "../journal/hash.ts";
import {
  IncrementalJournal,
  type JournalSnapshot,
  type RowSink,
  walkSegment,
} from "../journal/incremental.ts";
import type { ChainFault, WalkerState } from "../journal/verify.ts";
import { MAX_CACHED_JOURNALS, readJournal, viewFor } from "../journal/journal_file.ts";
import { BOARD_FOLD_SINK } from "./sink.ts";
import { type Board, boardOf, type CardDiff, type FoldState, mergeFoldStates } from "./fold.ts";

/** The response of `GET /review-board/runs/<run_id>`. */
export interface ProjectionReceipt {
  run_id: string;
  board: Board;
  projection_hash: string;
  journal_head: string;
  journal_verified: boolean;
  event_count: number;
}

/** A receipt plus what the server needs but does not serve. */
export interface Projection {
  receipt: ProjectionReceipt;
  /** The first bad row when the chain does not verify. */
  fault?: ChainFault;
  /** Next `seq` an append would take (when verified). */
  nextSeq: number;
  /** Latest diff capture of every task. */
  diffs: ReadonlyMap<string, CardDiff>;
}

/** First reads at least this large are folded on two cores. */
const PARALLEL_FOLD_MIN_BYTES = 8 << 20;

/** The board fold as an incremental journal sink, parallel on large first reads. */
export const BOARD_SINK: RowSink<FoldState> = {
  ...BOARD_FOLD_SINK,
  parallel: {
    minBytes: PARALLEL_FOLD_MIN_BYTES,
    // Measured on 2 cores: an even split; this thread also reads, merges and builds the board.
    firstShare: Number(Deno.env.get("SERVICE_FOLD_FIRST_SHARE")) || 0.5,
    foldSegment: foldSegmentInWorker,
    merge: mergeFoldStates,
  },
};

// A worker per large first read, ended as soon as it answers. Where no worker can start (a
// single-file bundle has no module to load), the segment is folded on this thread instead.
function foldSegmentInWorker(
  bytes: Uint8Array,
  startLine: number,
): Promise<{ walker: WalkerState; state: FoldState }> {
  const inThread = () => {
    const { walker, state } = walkSegment(BOARD_FOLD_SINK, bytes, startLine);
    return { walker: walker.toState(), state };
  };
  let worker: Worker;
  try {
    worker = new Worker(new URL("./segment_worker.ts", import.meta.url), { type: "module" });
  } catch {
    return Promise.resolve(inThread());
  }
  return new Promise((resolve) => {
    worker.onmessage = (event) => {
      worker.terminate();
      resolve(event.data);
    };
    worker.onerror = (event) => {
      event.preventDefault();
      worker.terminate();
      resolve(inThread());
    };
    // Shared memory crosses without a copy; an ordinary buffer is cut down to the segment.
    const shared = bytes.buffer instanceof SharedArrayBuffer;
    worker.postMessage({ bytes: shared ? bytes : bytes.slice(), startLine });
  });
}

/** SHA-256 hex of the canonical JSON of a board. */
export function projectionHash(board: Board): string {
  return sha256Hex(canonicalJson(board));
}

/** Build the receipt from a journal snapshot (pure). */
export function receiptOf(runId: string, snapshot: JournalSnapshot<FoldState>): Projection {
  const board = boardOf(snapshot.state);
  const walker = snapshot.walker;
  return {
    receipt: {
      run_id: runId,
      board,
      projection_hash: projectionHash(board),
      journal_head: walker.lastHash,
      journal_verified: walker.verified,
      event_count: board.event_count,
    },
    fault: walker.firstFault,
    nextSeq: walker.cursor.nextSeq,
    diffs: new Map(snapshot.state.diffs),
  };
}

const boardViews = new Map<string, IncrementalJournal<FoldState>>();
const memo = new Map<string, { version: number; runId: string; projection: Projection }>();

/**
 * Project the journal at `journalPath` (read under a shared lock; incremental when it only grew,
 * and the previous answer itself when its bytes did not change at all).
 */
export async function projectJournal(runId: string, journalPath: string): Promise<Projection> {
  const snapshot = await readJournal(journalPath, viewFor(journalPath, boardViews, BOARD_SINK));
  const cached = memo.get(journalPath);
  if (cached && cached.version === snapshot.version && cached.runId === runId) {
    return cached.projection;
  }
  const projection = receiptOf(runId, snapshot);
  memo.delete(journalPath);
  memo.set(journalPath, { version: snapshot.version, runId, projection });
  while (memo.size > MAX_CACHED_JOURNALS) memo.delete(memo.keys().next().value!);
  return projection;
}
