/**
 * Ticket moves through the write-back outbox (`trackers.<name>.move_to`, lib/trackers/move.ts):
 * the outbox entry of a claim, a landing or a final failure, and what becomes of a move once it
 * is settled — recorded as `last_move` (`integrations list`) and journaled as
 * `task_ticket_moved` in the task's run (`status` and the board show it). A move that fails
 * never fails its task.
 */
import * as ev from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import type { Task } from "../tasks/task.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import { type MoveEvent, moveFor, type MoveResult } from "./move.ts";
import type { OutboxEntry } from "./outbox.ts";
import type { TrackerSettings } from "./settings.ts";

/**
 * The outbox entry moving `task`'s ticket for `event`, or undefined when `move_to` names no
 * state for it. One entry per claim (its session) and per landing or failure (the task's
 * revision then), so a resumed or re-run service never moves twice for the same event.
 */
export function moveEntry(
  s: TrackerSettings,
  task: Task,
  { event, at }: { event: MoveEvent; at: string },
): OutboxEntry | undefined {
  const move = moveFor(s.moveTo, event);
  if (!move || !task.source) return undefined;
  const once = event === "claimed" ? task.session_id ?? `r${task.revision}` : `r${task.revision}`;
  return {
    key: `${s.name}/${task.id}/move/${event}/${once}`,
    tracker: s.name,
    task_id: task.id,
    ...(task.run_id ? { run_id: task.run_id } : {}),
    ref: task.source.ref,
    ids: task.source.ids ?? {},
    text: "",
    move,
    landed_at: at,
    state: "pending",
    attempts: 0,
    next_at: at,
  };
}

/** How a settled move reads (`integrations list`, the journal row's detail). */
export function moveWords(entry: OutboxEntry, result: MoveResult): string {
  const to = `"${entry.move!.to}" (${entry.move!.event})`;
  switch (result.outcome) {
    case "moved":
      return `${entry.ref} moved to ${result.state} for ${entry.task_id}`;
    case "already":
      return `${entry.ref} already ${result.state}; not moved to ${to}`;
    case "left":
      return `${entry.ref} left ${result.state}: a done ticket is moved back only by a person ` +
        `reopening it; not moved to ${to}`;
  }
}

/** Journal what became of `entry`'s move in its task's run (nothing without a run). */
export async function journalMove(
  paths: WorkspacePaths,
  entry: OutboxEntry,
  o: { outcome: "moved" | "already" | "left" | "failed"; state?: string; detail?: string },
): Promise<void> {
  if (!entry.run_id || !entry.move) return;
  await appendEvents(journalPath(paths, entry.run_id), [ev.taskTicketMoved({
    task_id: entry.task_id,
    tracker: entry.tracker,
    ref: entry.ref,
    event: entry.move.event,
    to: entry.move.to,
    outcome: o.outcome,
    ...(o.state ? { state: o.state } : {}),
    ...(o.detail ? { detail: o.detail } : {}),
  })]);
}
