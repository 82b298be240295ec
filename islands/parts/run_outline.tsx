/**
 * Tasks of the run that have no card yet — planned, waiting or blocked — with why. The board's
 * columns show only what the journal's board events say (spec §3.2); this list shows the rest
 * of the plan so "Queued 0" never hides two tasks that wait.
 */
import type { OutlineTask, TaskState } from "../../lib/board/activity_types.ts";
import { CardTitle } from "./card_title.tsx";

/** Words for the states a task without a card can be in. */
export const STATE_WORDS: Record<TaskState, string> = {
  planned: "not started",
  blocked: "blocked",
  waiting: "waiting",
  queued: "queued",
  running: "running",
  gated: "gated",
  needs_review: "needs review",
  merged: "merged",
  unchanged: "no changes",
  failed: "FAILED",
  cancelled: "cancelled",
  done: "DONE by an operator",
};

/** Props of {@link RunOutlineView}. */
export interface RunOutlineViewProps {
  /** The outline's tasks that have no card on the board. */
  tasks: OutlineTask[];
  alreadyLanded: number;
  selected?: string | null;
  onSelect?: (taskId: string) => void;
}

/** The not-started list under the columns (nothing when every task has a card). */
export function RunOutlineView({ tasks, alreadyLanded, selected, onSelect }: RunOutlineViewProps) {
  if (tasks.length === 0 && alreadyLanded === 0) return null;
  return (
    <section class="outline" aria-labelledby="outline-heading">
      <h2 id="outline-heading">
        Not started <span class="count" data-count={tasks.length}>{tasks.length}</span>
      </h2>
      {alreadyLanded > 0 && (
        <p class="muted" data-already-landed={alreadyLanded}>
          {alreadyLanded} step{alreadyLanded === 1 ? "" : "s"}{" "}
          of this plan landed in an earlier run and {alreadyLanded === 1 ? "was" : "were"}{" "}
          not run again.
        </p>
      )}
      {tasks.length > 0 && (
        <ol>
          {tasks.map((t) => (
            <li key={t.task_id}>
              <button
                type="button"
                class="card"
                aria-pressed={t.task_id === selected}
                data-task-id={t.task_id}
                data-state={t.state}
                onClick={() => onSelect?.(t.task_id)}
              >
                <span class="id">{t.task_id}</span>{" "}
                <span class={`badge ${t.state === "blocked" ? "bad" : ""}`}>
                  {STATE_WORDS[t.state]}
                </span>
                {(t.title || t.role) && (
                  <span class="meta">
                    {t.title && <CardTitle title={t.title} />}
                    {t.title && t.role ? " · " : ""}
                    {t.role && <em>{t.role}</em>}
                  </span>
                )}
                {t.reason && <span class="meta" data-reason>{t.reason}</span>}
              </button>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
