/** The five columns of the board (spec §3.2) with their card counts. */
import { type Column, COLUMNS } from "../../lib/board/types.ts";
import type { Board } from "../../lib/board/types.ts";
import type { OutlineTask } from "../../lib/board/activity_types.ts";
import { cardFace } from "../../lib/dashboard/card_face.ts";
import type { EvidenceMark } from "../../lib/review/types.ts";
import { CardView } from "./card_view.tsx";

/** Column headings as shown to people. */
export const COLUMN_LABELS: Record<Column, string> = {
  queued: "Queued",
  running: "Running",
  gated: "Gated",
  needs_review: "Needs review",
  merged: "Merged",
};

/** Props of {@link BoardColumns}. */
export interface BoardColumnsProps {
  board: Board;
  /** The run outline's tasks by id: cards then show their current attempt only. */
  tasks?: ReadonlyMap<string, OutlineTask>;
  /** Sealed evidence checks by task id. */
  evidence?: Readonly<Record<string, EvidenceMark>>;
  selected?: string | null;
  onSelect?: (taskId: string) => void;
}

/** Every column, always all five, each with its count and cards in board order. */
export function BoardColumns({ board, tasks, evidence, selected, onSelect }: BoardColumnsProps) {
  return (
    <div class="columns">
      {COLUMNS.map((column) => {
        const cards = board.columns[column];
        return (
          <section class="column" data-column={column} aria-labelledby={`col-${column}`}>
            <h2 id={`col-${column}`}>
              <span>{COLUMN_LABELS[column]}</span>
              <span class="count" data-count={cards.length} aria-label={`${cards.length} cards`}>
                {cards.length}
              </span>
            </h2>
            {cards.length === 0 ? <p class="muted" style="margin:.2rem">empty</p> : (
              <ol>
                {cards.map((card) => (
                  <li key={card.task_id}>
                    <CardView
                      face={cardFace(card, tasks?.get(card.task_id), evidence?.[card.task_id])}
                      selected={card.task_id === selected}
                      onSelect={onSelect}
                    />
                  </li>
                ))}
              </ol>
            )}
          </section>
        );
      })}
    </div>
  );
}
