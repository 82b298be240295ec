/**
 * A review action (spec §4.1 rules 6-7): under the journal's exclusive lock, re-fold the board
 * at the verified head, check the operator's view (If-Match), sign a `review_board.action`
 * entry onto the audit chain, then append the `task_review_decision` row carrying that entry's
 * hash. A poisoned journal or a broken audit chain refuses with 409 and writes nothing.
 */
import { taskReviewDecision } from "../journal/events.ts";
import { z } from "zod";
import { appendAuditEntry, AuditChainBrokenError, type AuditPaths } from "../audit/store.ts";
import { REVIEW_ACTION_EVENT } from "../audit/chain.ts";
import type { Principal } from "../auth/tokens.ts";
import { type Card, type Column, DECISIONS, type FoldState } from "../board/fold.ts";
import { BOARD_SINK, type Projection, projectJournal, receiptOf } from "../board/projection.ts";
import { HttpError } from "../http/errors.ts";
import { appendEventsWith, JournalPoisonedError, viewFor } from "../journal/journal_file.ts";
import type { IncrementalJournal } from "../journal/incremental.ts";
import type { JsonValue } from "../journal/canonical_json.ts";

/** Longest note accepted, in characters. */
const MAX_NOTE_LENGTH = 4000;

/** The request body of spec §2.6. Unknown fields are refused so typos are not silently dropped. */
export const ReviewRequest = z.strictObject({
  decision: z.enum(DECISIONS),
  note: z.string().max(MAX_NOTE_LENGTH).optional(),
});
/** A validated review request. */
export type ReviewRequest = z.infer<typeof ReviewRequest>;

/** The receipt of spec §2.6. */
export interface ReviewReceipt {
  decision: string;
  principal: string;
  scope: string;
  projection_hash: string;
  journal_head: string;
  journal_entry_hash: string;
  diff_sha256: string | null;
  audit_event_hash: string;
}

/** What a review action needs besides the request. */
export interface ReviewContext {
  runId: string;
  taskId: string;
  journalPath: string;
  audit: AuditPaths;
  auditKey: () => Promise<Uint8Array>;
  principal: Principal;
  /** The projection hash the operator saw (`If-Match`), when sent. */
  ifMatch?: string;
  now?: () => Date;
}

/**
 * A merge applies only to work waiting for review: once a card is under merged (its merge was
 * decided, or it landed) a second merge would chain a decision nothing can act on, and a task
 * that is queued, running or gated has no verified work to merge. Refused with 409, nothing
 * written.
 */
function refuseMergeOf(ctx: ReviewContext, state: { card: Card; column: Column }): void {
  const { card, column } = state;
  if (column === "merged") {
    const pending = card.verdict?.decision === "merge" && card.verdict.index === card.last_index;
    throw pending
      ? new HttpError(
        409,
        "merge_pending",
        `task ${ctx.taskId} already has a merge decision (row ${card.last_index}); a second one would change nothing`,
      )
      : new HttpError(
        409,
        "already_merged",
        `task ${ctx.taskId} already landed (row ${card.last_index}); there is nothing left to merge`,
      );
  }
  if (column !== "needs_review") {
    throw new HttpError(
      409,
      "not_reviewable",
      `task ${ctx.taskId} is ${
        column.replace("_", " ")
      }, not waiting for review; only a task under needs review can be merged`,
    );
  }
}

const reviewViews = new Map<string, IncrementalJournal<FoldState>>();

/** Record one review decision; returns the receipt and the freshly re-folded projection. */
export async function recordReview(
  request: ReviewRequest,
  ctx: ReviewContext,
): Promise<{ receipt: ReviewReceipt; projection: Projection }> {
  let receipt: ReviewReceipt | undefined;
  const view = viewFor(ctx.journalPath, reviewViews, BOARD_SINK);
  try {
    const [appended] = await appendEventsWith(ctx.journalPath, view, async (snapshot) => {
      const seen = receiptOf(ctx.runId, snapshot).receipt;
      if (ctx.ifMatch !== undefined && ctx.ifMatch !== seen.projection_hash) {
        throw new HttpError(
          412,
          "board_moved",
          `the board changed since it was loaded (you saw ${ctx.ifMatch}, it is now ${seen.projection_hash}); reload and review again`,
        );
      }
      if (!snapshot.state.cards.has(ctx.taskId)) {
        throw new HttpError(
          404,
          "unknown_task",
          `run ${ctx.runId} has no card for task ${ctx.taskId}`,
        );
      }
      if (request.decision === "merge") refuseMergeOf(ctx, snapshot.state.cards.get(ctx.taskId)!);
      const diffSha = snapshot.state.diffs.get(ctx.taskId)?.sha256 ?? null;
      const binding: Record<string, JsonValue> = {
        run_id: ctx.runId,
        task_id: ctx.taskId,
        decision: request.decision,
        projection_hash: seen.projection_hash,
        journal_head: seen.journal_head,
        diff_sha256: diffSha,
      };
      if (request.note !== undefined) binding.note = request.note;
      const audit = await appendAuditEntry(ctx.audit, await ctx.auditKey(), {
        event: REVIEW_ACTION_EVENT,
        principal: ctx.principal.principal,
        data: binding,
      }, ctx.now);
      receipt = {
        decision: request.decision,
        principal: ctx.principal.principal,
        scope: ctx.principal.scope,
        projection_hash: seen.projection_hash,
        journal_head: seen.journal_head,
        journal_entry_hash: "",
        diff_sha256: diffSha,
        audit_event_hash: audit.lineHash,
      };
      return [taskReviewDecision({
        task_id: ctx.taskId,
        decision: request.decision,
        note: request.note,
        principal: ctx.principal.principal,
        scope: ctx.principal.scope,
        projection_hash: seen.projection_hash,
        journal_head: seen.journal_head,
        diff_sha256: diffSha,
        audit_event_hash: audit.lineHash,
      })];
    }, { now: ctx.now });
    receipt!.journal_entry_hash = appended.hash;
  } catch (e) {
    if (e instanceof JournalPoisonedError) {
      throw new HttpError(
        409,
        "journal_poisoned",
        `${e.fault.message}: the journal does not verify, so no action can chain onto it`,
      );
    }
    if (e instanceof AuditChainBrokenError) {
      throw new HttpError(409, "audit_chain_broken", e.message);
    }
    throw e;
  }
  return { receipt: receipt!, projection: await projectJournal(ctx.runId, ctx.journalPath) };
}
