/**
 * Reads review decisions that operators appended to the run journal (through the board) since
 * the last look. Only a verifying journal is trusted: a decision on a poisoned chain is ignored.
 */
import type { RowSink } from "../journal/incremental.ts";
import { IncrementalJournal } from "../journal/incremental.ts";
import { readJournal } from "../journal/journal_file.ts";

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
    if (row.type !== "task_review_decision") return;
    const d = row.data as Record<string, unknown>;
    if (typeof d.task_id !== "string" || typeof d.principal !== "string") return;
    if (d.decision !== "approve" && d.decision !== "request_changes" && d.decision !== "merge") {
      return;
    }
    state.push({
      index,
      taskId: d.task_id,
      decision: d.decision,
      principal: d.principal,
      ...(typeof d.note === "string" ? { note: d.note } : {}),
    });
  },
  clone: (state) => [...state],
};

/** Hands out each verified decision once. */
export class ReviewWatcher {
  readonly #path: string;
  readonly #view = new IncrementalJournal(DECISIONS_SINK);
  #seen = 0;
  #started = false;

  constructor(journalPath: string) {
    this.#path = journalPath;
  }

  /** Decisions appended since the previous call (the first call only sets the starting point). */
  async newDecisions(): Promise<ReviewDecision[]> {
    const snapshot = await readJournal(this.#path, this.#view);
    if (!snapshot.walker.verified) return [];
    const all = snapshot.state;
    if (!this.#started) {
      this.#started = true;
      this.#seen = all.length;
      return [];
    }
    const fresh = all.slice(this.#seen);
    this.#seen = all.length;
    return fresh;
  }
}
