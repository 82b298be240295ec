/**
 * The projection receipt (spec §2.3): the board folded from a run's journal, its hash, the
 * journal head and the result of re-walking the whole chain at request time.
 */
import { canonicalJson } from "../journal/canonical_json.ts";
import { sha256Hex } from "../journal/hash.ts";
import { IncrementalJournal, type JournalSnapshot, type RowSink } from "../journal/incremental.ts";
import { readJournal, viewFor } from "../journal/journal_file.ts";
import type { ChainFault } from "../journal/verify.ts";
import {
  type Board,
  boardOf,
  type CardDiff,
  cloneFoldState,
  foldRow,
  type FoldState,
  initialFoldState,
} from "./fold.ts";

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

/** The board fold as an incremental journal sink. */
export const BOARD_SINK: RowSink<FoldState> = {
  init: initialFoldState,
  apply: foldRow,
  clone: cloneFoldState,
};

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
  memo.set(journalPath, { version: snapshot.version, runId, projection });
  return projection;
}
