/**
 * Reads review decisions that operators appended to the run journal (through the board) since
 * the last look. Only a verifying journal is trusted: a decision on a poisoned chain is ignored,
 * and so is a row the board does not count (lib/journal/event_reader.ts).
 * The first look keeps the merges and requests for changes still pending, so a merge
 * acknowledged before a restart (or while no orchestrator ran) lands, and a request for changes
 * starts its new attempt, rather than being skipped as old.
 */
import type { RowSink } from "../journal/incremental.ts";
import { IncrementalJournal } from "../journal/incremental.ts";
import { readJournal } from "../journal/journal_file.ts";
import { BOARD_FOLD_SINK } from "../board/sink.ts";
import { cardsOf } from "../board/fold.ts";
import { readEvent } from "../journal/event_reader.ts";
import type { CoreEvent } from "./core/protocol.ts";

/** One operator decision. */
export interface ReviewDecision {
  index: number;
  taskId: string;
  decision: "approve" | "request_changes" | "merge";
  principal: string;
  note?: string;
}

const DECISIONS_SINK: RowSink<ReviewDecision[]> = {
  init: () => [],
  apply(state, row, index) {
    const event = row.type === "task_review_decision" ? readEvent(row) : undefined;
    if (event?.type !== "task_review_decision") return;
    state.push({
      index,
      taskId: event.task_id,
      decision: event.decision,
      principal: event.principal,
      ...(event.note === undefined ? {} : { note: event.note }),
    });
  },
  clone: (state) => [...state],
};

/** A decision as an event of the decision core. */
export function reviewEvent(d: ReviewDecision): CoreEvent {
  return {
    type: "review",
    taskId: d.taskId,
    decision: d.decision,
    principal: d.principal,
    ...(d.note === undefined ? {} : { note: d.note }),
  };
}

/** Hands out each verified decision once. */
export class ReviewWatcher {
  readonly #path: string;
  readonly #view = new IncrementalJournal(DECISIONS_SINK);
  #seen = 0;
  #started = false;
  /** Merges decided before this process started, kept until their task waits for review. */
  readonly #decidedBefore = new Map<string, ReviewDecision>();

  constructor(journalPath: string) {
    this.#path = journalPath;
  }

  /**
   * The first look: the starting point, and the merges (and requests for changes) operators
   * decided that were never acted on (handed out by {@link decidedBefore} once their task waits
   * for review again). Call it before anything is appended on recovery.
   */
  async start(): Promise<void> {
    for (const d of await this.newDecisions()) this.#decidedBefore.set(d.taskId, d);
  }

  /** The decisions taken before this process whose task now waits for review (each once). */
  decidedBefore(waitsForReview: (taskId: string) => boolean): ReviewDecision[] {
    const ready = [...this.#decidedBefore.values()].filter((d) => waitsForReview(d.taskId));
    for (const d of ready) this.#decidedBefore.delete(d.taskId);
    return ready;
  }

  /**
   * Decisions appended since the previous call. The first call sets the starting point and
   * returns only the merge decisions still pending then (earlier decisions were acted on or
   * superseded).
   */
  async newDecisions(): Promise<ReviewDecision[]> {
    const snapshot = await readJournal(this.#path, this.#view);
    if (!snapshot.walker.verified) return [];
    const all = snapshot.state;
    if (!this.#started) {
      this.#started = true;
      this.#seen = all.length;
      return await this.#pendingMerges(all);
    }
    const fresh = all.slice(this.#seen);
    this.#seen = all.length;
    return fresh;
  }

  /**
   * The decisions still pending: a merge whose card sits under merged because of the decision
   * itself (its last column-setting row is that merge: nothing landed it, sent it back or failed
   * it), and a request for changes that is the last word on work still waiting for review (taken
   * while no orchestrator ran: nothing started the new attempt it asks for).
   */
  async #pendingMerges(all: ReviewDecision[]): Promise<ReviewDecision[]> {
    const board = await readJournal(this.#path, new IncrementalJournal(BOARD_FOLD_SINK));
    const byIndex = new Map(all.map((d) => [d.index, d]));
    const out: ReviewDecision[] = [];
    for (const { card, column } of cardsOf(board.state)) {
      const merge = byIndex.get(card.last_index);
      if (column === "merged" && merge?.decision === "merge" && merge.taskId === card.task_id) {
        out.push(merge);
      }
      const verdict = card.verdict && byIndex.get(card.verdict.index);
      if (
        column === "needs_review" && verdict?.decision === "request_changes" &&
        verdict.taskId === card.task_id && verdict.index > card.last_index
      ) out.push(verdict);
    }
    return out;
  }
}
