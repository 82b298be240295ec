/**
 * The review action island: approve, request changes (with a note) or merge. Each POST names
 * the projection the operator is looking at (`If-Match`), so a board that moved is refused
 * (412) instead of reviewed blind. The island changes nothing itself: it shows the server's
 * receipt and hands the server's re-folded board to the page.
 */
import { useState } from "preact/hooks";
import type { Decision } from "../lib/board/types.ts";
import type { ProjectionReceipt } from "../lib/board/types.ts";
import type { ReviewReceipt } from "../lib/review/types.ts";
import { ApiError, apiFetch } from "../lib/dashboard/api.ts";
import { ReviewReceiptView } from "./parts/review_receipt.tsx";

/** Props of {@link ReviewActions}. */
export interface ReviewActionsProps {
  runId: string;
  taskId: string;
  /**
   * Projection hash of the board the operator saw: the one on screen, unless the task itself
   * changed since they looked at it (lib/dashboard/seen_task.ts).
   */
  projectionHash: string;
  /** True when the task changed on screen since the operator looked at it. */
  changedWhileLooking?: boolean;
  /** The operator looked at the task as it is now. */
  onLookedAgain?: () => void;
  /** True when actions must not be offered (journal tampered). */
  disabled: boolean;
  /** The decisions that still apply to the task; the others are shown disabled. */
  decisions: readonly Decision[];
  /** Why some or all decisions do not apply. */
  why?: string;
  token: string;
  /** Show the board the server answered with. */
  onBoard: (receipt: ProjectionReceipt) => void;
  /** Refetch the board (offered after a 412). */
  onReload: () => void;
}

const LABELS: Record<Decision, string> = {
  approve: "Approve",
  request_changes: "Request changes",
  merge: "Merge",
};

/** The three action buttons, the note field, and the last receipt or error. */
export function ReviewActions(props: ReviewActionsProps) {
  const [note, setNote] = useState("");
  const [busy, setBusy] = useState(false);
  const [receipt, setReceipt] = useState<ReviewReceipt | null>(null);
  const [error, setError] = useState<ApiError | null>(null);

  async function act(decision: Decision) {
    setBusy(true);
    setError(null);
    try {
      const body = note.trim() ? { decision, note: note.trim() } : { decision };
      const answer = await apiFetch<{ receipt: ReviewReceipt; board: ProjectionReceipt }>(
        `/dashboard/review-board/runs/${encodeURIComponent(props.runId)}/tasks/${
          encodeURIComponent(props.taskId)
        }/review`,
        {
          method: "POST",
          body,
          token: props.token,
          headers: { "if-match": `"${props.projectionHash}"` },
        },
      );
      setReceipt(answer.receipt);
      setNote("");
      props.onBoard(answer.board);
    } catch (e) {
      setError(e instanceof ApiError ? e : new ApiError(0, "error", String(e)));
    } finally {
      setBusy(false);
    }
  }

  const off = busy || props.disabled;
  return (
    <div>
      {props.disabled && (
        <p class="error">Review actions are disabled: this run's journal does not verify.</p>
      )}
      {!props.disabled && props.why && <p class="muted" data-actions-why>{props.why}</p>}
      {props.changedWhileLooking && (
        <div class="error" role="status" data-task-changed>
          <p style="margin:0">
            This task changed while you were looking at it (its card, diff or verdict above is new).
            A decision now names the board you saw and is refused: look again first.
          </p>
          <button type="button" onClick={props.onLookedAgain}>I have looked at it again</button>
        </div>
      )}
      <div class="actions">
        <label>
          Note (sent with the decision)
          <textarea
            value={note}
            disabled={off || props.decisions.length === 0}
            onInput={(e) => setNote((e.target as HTMLTextAreaElement).value)}
          />
        </label>
        {(Object.keys(LABELS) as Decision[]).map((decision) => (
          <button
            type="button"
            key={decision}
            disabled={off || !props.decisions.includes(decision)}
            data-decision={decision}
            onClick={() => act(decision)}
          >
            {LABELS[decision]}
          </button>
        ))}
      </div>
      {error && (
        <div class="error" role="alert" data-action-error={error.status}>
          <p style="margin:0">{error.words}</p>
          {error.status === 412 && (
            <button type="button" onClick={props.onReload}>Reload board</button>
          )}
        </div>
      )}
      {receipt && <ReviewReceiptView receipt={receipt} />}
    </div>
  );
}
