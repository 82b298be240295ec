/**
 * The head of the task detail: which task, where it stands, its whole title (its reordering
 * controls shown, not obeyed), and a way back to its card. It takes the keyboard when it
 * appears: choosing a card brings the detail into view and the keyboard to it, since on a board
 * of 200 cards the detail sits below every column and Tab would otherwise walk every card first.
 */
import { useEffect, useRef } from "preact/hooks";
import { showBidiControls } from "../../lib/dashboard/bidi_controls.ts";

/** Props of {@link TaskHeading}. */
export interface TaskHeadingProps {
  taskId: string;
  /** Where the task stands ("Needs review", "not started"). */
  where: string;
  title?: string;
}

/** The detail's heading (`#task-heading`), its "Back to its card" button and the title. */
export function TaskHeading({ taskId, where, title }: TaskHeadingProps) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <div>
      <h2 id="task-heading" tabIndex={-1} ref={heading}>
        Task <code>{taskId}</code> <span class="muted">({where})</span>
      </h2>
      <button type="button" class="back-to-card" onClick={() => cardButton(taskId)?.focus()}>
        Back to its card on the board
      </button>
      {title && <p class="task-title" style="margin:.2rem 0">{showBidiControls(title)}</p>}
    </div>
  );
}

/** The board's button of task `taskId` (a card, or a task not started yet). */
function cardButton(taskId: string): HTMLButtonElement | null {
  return document.querySelector<HTMLButtonElement>(
    `button.card[data-task-id="${CSS.escape(taskId)}"]`,
  );
}
