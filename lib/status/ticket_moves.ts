/**
 * The `ticket_moves` status part (docs/trackers.md#moving-tickets): the current run's tracker
 * tickets whose move to a `move_to` state failed, read from the run's `task_ticket_moved` rows —
 * so `status` names them whether or not the run's process is alive. A move that later succeeded
 * for the same task and event is no longer listed. The task itself never failed for it.
 */
import { readLine } from "../journal/event_reader.ts";
import { readRunState } from "../runs/run_state.ts";
import { journalPath } from "../workspace.ts";
import type { StatusPart } from "./status.ts";

/** A ticket move that failed. */
export interface TicketMoveFailure {
  task_id: string;
  tracker: string;
  ref: string;
  /** claimed, landed or failed. */
  event: string;
  to: string;
  detail: string;
}

/** The failed moves of a journal's lines, the latest row per task and event deciding (pure). */
export function failedTicketMoves(lines: string[]): TicketMoveFailure[] {
  const latest = new Map<string, TicketMoveFailure | undefined>();
  for (const line of lines) {
    if (!line.includes('"task_ticket_moved"')) continue;
    const e = readLine(line);
    if (e?.type !== "task_ticket_moved") continue;
    const key = `${e.task_id}\n${e.event ?? ""}`;
    latest.delete(key); // re-inserted last: listed in the order they last failed
    latest.set(
      key,
      e.outcome === "failed"
        ? {
          task_id: e.task_id,
          tracker: e.tracker ?? "",
          ref: e.ref ?? "",
          event: e.event ?? "",
          to: e.to ?? "",
          detail: e.detail ?? "",
        }
        : undefined,
    );
  }
  return [...latest.values()].filter((f): f is TicketMoveFailure => f !== undefined);
}

/** What `status` says of each failed move (tracker words: the caller's palette escapes them). */
export function ticketMoveLines(failures: TicketMoveFailure[] | undefined): string[] {
  return (failures ?? []).map((f) =>
    `  ${f.task_id}: ticket ${f.ref} not moved to "${f.to}" (${f.event}): ${f.detail}`
  );
}

/** The current run's failed ticket moves (none without a run). */
export const ticketMovesPart: StatusPart = async (app) => {
  const state = await readRunState(app.paths);
  if (!state) return [];
  try {
    const text = await Deno.readTextFile(journalPath(app.paths, state.run_id));
    return failedTicketMoves(text.split("\n"));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
};
