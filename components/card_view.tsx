/** One card of the board: task id, title and role, diff summary, gate receipts, verdict. */
import type { Card } from "../lib/board/fold.ts";

/** Props of {@link CardView}. */
export interface CardViewProps {
  card: Card;
  selected?: boolean;
  onSelect?: (taskId: string) => void;
}

function gateText(gate: unknown): string {
  if (gate && typeof gate === "object" && !Array.isArray(gate)) {
    const { kind, detail } = gate as Record<string, unknown>;
    return `${String(kind ?? "signal")}: ${String(detail ?? "")}`;
  }
  return JSON.stringify(gate);
}

/** A card as a toggle button that selects the task for review. */
export function CardView({ card, selected = false, onSelect }: CardViewProps) {
  const { diff, verdict } = card;
  return (
    <button
      type="button"
      class="card"
      aria-pressed={selected}
      data-task-id={card.task_id}
      onClick={() => onSelect?.(card.task_id)}
    >
      <span class="id">{card.task_id}</span>
      {(card.title || card.role) && (
        <span class="meta">
          {card.title}
          {card.title && card.role ? " · " : ""}
          {card.role && <em>{card.role}</em>}
        </span>
      )}
      {diff && (
        <span class="meta" data-diff-summary>
          <span class="plus">+{diff.added}</span> <span class="minus">−{diff.removed}</span>,{" "}
          {diff.files} {diff.files === 1 ? "file" : "files"}
        </span>
      )}
      {card.gates?.map((gate, i) => <span class="gate" key={i}>✗ {gateText(gate)}</span>)}
      {verdict && (
        <span class="verdict" data-verdict={verdict.decision}>
          <strong>{verdict.decision.replace("_", " ")}</strong> by {verdict.principal}
          {verdict.note ? `: “${verdict.note}”` : ""}
        </span>
      )}
    </button>
  );
}
