/**
 * A review action (spec §4.1 rules 6-7): under the journal's exclusive lock, re-fold the board
 * at the verified head, check the operator's view (If-Match), sign a `review_board.action`
 * entry onto the audit chain, then append the `task_review_decision` row carrying that entry's
 * hash. A poisoned journal or a broken audit chain refuses with 409 and writes nothing. A row
 * that cannot be written (a full disk: 507) takes its audit entry back, so nothing is recorded
 * and no receipt is given; only a synced row is acknowledged.
 */
import { taskReviewDecision } from "../journal/events.ts";
import { z } from "zod";
import {
  appendAuditEntry,
  AuditChainBrokenError,
  type AuditPaths,
  retractAuditEntry,
} from "../audit/store.ts";
import { REVIEW_ACTION_EVENT } from "../audit/chain.ts";
import type { Principal } from "../auth/tokens.ts";
import { cardOf, type FoldState, latestDiff } from "../board/fold.ts";
import { type Card, type Column, DECISIONS, type ProjectionReceipt } from "../board/types.ts";
import { projectJournalAsFolded, receiptOf } from "../board/projection.ts";
import { BOARD_FOLD_SINK } from "../board/sink.ts";
import { ConflictError, DomainError, NotFoundError } from "../errors.ts";
import { appendEventsWith, JournalPoisonedError, viewFor } from "../journal/journal_file.ts";
import type { IncrementalJournal } from "../journal/incremental.ts";
import type { JsonValue } from "../journal/canonical_json.ts";
import { sha256Hex } from "../journal/hash.ts";
import { journalContradiction } from "../audit/workspace_check.ts";
import { diffPath, type WorkspacePaths } from "../workspace.ts";
import { taskStateAt } from "./activity.ts";
import type { ReviewReceipt } from "./types.ts";

/** Longest note accepted, in characters. */
const MAX_NOTE_LENGTH = 4000;

/** The request body of spec §2.6. Unknown fields are refused so typos are not silently dropped. */
export const ReviewRequest = z.strictObject({
  decision: z.enum(DECISIONS),
  note: z.string().max(MAX_NOTE_LENGTH).optional(),
});
/** A validated review request. */
export type ReviewRequest = z.infer<typeof ReviewRequest>;

/** What a review action needs besides the request. */
export interface ReviewContext {
  runId: string;
  taskId: string;
  journalPath: string;
  audit: AuditPaths;
  auditKey: () => Promise<Uint8Array>;
  principal: Principal;
  /** The projection hashes the operator may have seen (`If-Match`, lib/http/if_match.ts), when sent. */
  ifMatch?: readonly string[];
  now?: () => Date;
  /** The workspace (for the stored diff and the audit cross-check). */
  paths: WorkspacePaths;
  /** Fault injection for tests: runs between the audit append and the journal append. */
  afterAuditAppend?: () => void | Promise<void>;
}

/**
 * A merge applies only to work waiting for review: once a card is under merged (its merge was
 * decided, or it landed) a second merge would chain a decision nothing can act on, and a task
 * that is queued, running or gated has no verified work to merge. A request for changes starts
 * a new attempt only of work waiting for review too: on a FAILED, gated, running or merged task
 * no run acts on it, and its note would reach no agent. Refused with 409, nothing written.
 * Approvals stay attachments (spec §3.2) on any card.
 */
function refuseDecisionOn(
  ctx: ReviewContext,
  decision: ReviewRequest["decision"],
  state: { card: Card; column: Column },
): void {
  const { card, column } = state;
  if (decision === "approve") return;
  if (column === "merged" && decision === "merge") {
    const pending = card.verdict?.decision === "merge" && card.verdict.index === card.last_index;
    throw pending
      ? new ConflictError(
        "merge_pending",
        `task ${ctx.taskId} already has a merge decision (row ${card.last_index}); a second one would change nothing`,
      )
      : new ConflictError(
        "already_merged",
        `task ${ctx.taskId} already landed (row ${card.last_index}); there is nothing left to merge`,
      );
  }
  if (column === "needs_review") return;
  const where = column.replace("_", " ");
  throw decision === "merge"
    ? new ConflictError(
      "not_reviewable",
      `task ${ctx.taskId} is ${where}, not waiting for review; only a task under needs review can be merged`,
    )
    : new ConflictError(
      "not_reviewable",
      `task ${ctx.taskId} is ${where}, not waiting for review: no run would act on a request for ` +
        "changes, so its note would reach no agent (a FAILED task gets a new attempt with " +
        `\`service retry ${ctx.taskId}\`; landed work needs a new task)`,
    );
}

/**
 * The digest of the diff bytes the operator is served, which the receipt binds: null when no
 * diff was captured; 409 `diff_unverified` (nothing written) when the stored bytes are gone or
 * no longer hash to the capture chained in the journal, since nobody saw what was captured.
 */
async function servedDiffDigest(
  ctx: ReviewContext,
  captured: string | undefined,
): Promise<string | null> {
  if (captured === undefined) return null;
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(diffPath(ctx.paths, ctx.runId, ctx.taskId));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    throw new ConflictError(
      "diff_unverified",
      `the journal chains diff ${captured} for task ${ctx.taskId}, but its file is gone: nothing ` +
        "can be reviewed against it (re-run the task to capture it again)",
    );
  }
  const served = "sha256:" + sha256Hex(bytes);
  if (served !== captured) {
    throw new ConflictError(
      "diff_unverified",
      `the stored diff of task ${ctx.taskId} hashes to ${served}, not the ${captured} chained in ` +
        "the journal: it was edited after capture, so a review would bind a diff nobody saw " +
        "(restore the file or re-run the task)",
    );
  }
  return served;
}

const reviewViews = new Map<string, IncrementalJournal<FoldState>>();

/** Record one review decision; returns the receipt and the freshly re-folded board's receipt. */
export async function recordReview(
  request: ReviewRequest,
  ctx: ReviewContext,
): Promise<{ receipt: ReviewReceipt; board: ProjectionReceipt }> {
  let receipt: ReviewReceipt | undefined;
  let signed: string | undefined;
  const view = viewFor(ctx.journalPath, reviewViews, BOARD_FOLD_SINK);
  // The row could not be written (a full disk): the action did not happen, so its entry goes.
  const onWriteFailed = async () => {
    if (signed) await retractAuditEntry(ctx.audit, signed);
  };
  // Its card waits under needs review, but nothing is left to merge (`task_unchanged`). Read
  // before the journal's lock (reading takes it too); a closed attempt stays closed.
  if (
    request.decision !== "approve" &&
    await taskStateAt(ctx.journalPath, ctx.taskId).catch(() => undefined) === "unchanged"
  ) {
    throw new ConflictError(
      "no_changes",
      `task ${ctx.taskId} completed with no changes: its work changes nothing on the target ` +
        `branch, so there is nothing to ${
          request.decision === "merge" ? "merge" : "change"
        } (the task is closed)`,
    );
  }
  try {
    const [appended] = await appendEventsWith(ctx.journalPath, view, async (snapshot) => {
      const seen = receiptOf(ctx.runId, snapshot).receipt;
      if (ctx.ifMatch !== undefined && !ctx.ifMatch.includes(seen.projection_hash)) {
        throw new DomainError(
          "precondition_failed",
          "board_moved",
          `the board changed since it was loaded (you saw ${
            ctx.ifMatch.join(", ") || "no strong entity tag"
          }, it is now ${seen.projection_hash}); reload and review again`,
        );
      }
      const card = cardOf(snapshot.state, ctx.taskId);
      if (!card) {
        throw new NotFoundError(
          "unknown_task",
          `run ${ctx.runId} has no card for task ${ctx.taskId}`,
        );
      }
      refuseDecisionOn(ctx, request.decision, card);
      const contradiction = await journalContradiction(ctx.paths, ctx.runId, ctx.journalPath);
      if (contradiction) {
        throw new ConflictError(
          "journal_poisoned",
          `${contradiction.message}; no action can chain onto it (service audit verify names it)`,
        );
      }
      const diffSha = await servedDiffDigest(ctx, latestDiff(snapshot.state, ctx.taskId)?.sha256);
      const binding: Record<string, JsonValue> = {
        run_id: ctx.runId,
        task_id: ctx.taskId,
        decision: request.decision,
        scope: ctx.principal.scope,
        projection_hash: seen.projection_hash,
        journal_head: seen.journal_head,
        diff_sha256: diffSha,
      };
      if (request.note !== undefined) binding.note = request.note;
      const audit = await appendAuditEntry(ctx.audit, {
        event: REVIEW_ACTION_EVENT,
        principal: ctx.principal.principal,
        data: binding,
      }, { key: await ctx.auditKey(), now: ctx.now });
      signed = audit.lineHash;
      await ctx.afterAuditAppend?.();
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
    }, { now: ctx.now, onWriteFailed });
    receipt!.journal_entry_hash = appended.hash;
  } catch (e) {
    if (e instanceof JournalPoisonedError) {
      throw new ConflictError(
        "journal_poisoned",
        `${e.fault.message}: the journal does not verify, so no action can chain onto it`,
      );
    }
    if (e instanceof AuditChainBrokenError) {
      throw new ConflictError("audit_chain_broken", e.message);
    }
    throw e;
  }
  return { receipt: receipt!, board: await projectJournalAsFolded(ctx.runId, ctx.journalPath) };
}
