/** The selected task: its card facts, diff viewer, evidence panel and review actions. */
import type { Card, Column } from "../lib/board/fold.ts";
import type { ProjectionReceipt } from "../lib/board/projection.ts";
import { COLUMN_LABELS } from "../components/board_columns.tsx";
import { DiffViewer } from "./diff_viewer.tsx";
import { EvidencePanel } from "./evidence_panel.tsx";
import { ReviewActions } from "./review_actions.tsx";

/** Props of {@link TaskDetail}. */
export interface TaskDetailProps {
  receipt: ProjectionReceipt;
  card: Card;
  column: Column;
  token: string;
  onBoard: (receipt: ProjectionReceipt) => void;
  onReload: () => void;
}

/** Everything an operator needs to decide on one task. */
export function TaskDetail({ receipt, card, column, token, onBoard, onReload }: TaskDetailProps) {
  const runId = receipt.run_id;
  const version = `${card.diff?.sha256 ?? "none"}:${receipt.journal_verified}`;
  return (
    <section class="detail" aria-labelledby="task-heading">
      <div>
        <h2 id="task-heading">
          Task <code>{card.task_id}</code> <span class="muted">({COLUMN_LABELS[column]})</span>
        </h2>
        {card.title && <p style="margin:.2rem 0">{card.title}</p>}
      </div>
      <section aria-labelledby="diff-heading">
        <h3 id="diff-heading">Diff</h3>
        <DiffViewer runId={runId} taskId={card.task_id} token={token} version={version} />
      </section>
      <section aria-labelledby="evidence-heading">
        <h3 id="evidence-heading">Evidence</h3>
        <EvidencePanel runId={runId} taskId={card.task_id} token={token} version={version} />
      </section>
      <section aria-labelledby="review-heading">
        <h3 id="review-heading">Review</h3>
        <ReviewActions
          key={`${runId}/${card.task_id}`}
          runId={runId}
          taskId={card.task_id}
          projectionHash={receipt.projection_hash}
          disabled={!receipt.journal_verified}
          token={token}
          onBoard={onBoard}
          onReload={onReload}
        />
      </section>
    </section>
  );
}
