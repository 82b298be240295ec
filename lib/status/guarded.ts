/**
 * The `guarded` status part (DESIGN.md §18): the current run's tasks whose current attempt's
 * diff touches protected paths, adds or grows files over `max_landed_file_mb`, or leaves its
 * owned_files, read from the run's journal — so
 * `status` names them whether or not the run's process is alive. Landed and cancelled tasks are
 * left out: nothing is left to decide about them.
 */
import { ACTIVITY_SINK, type ActivityState } from "../board/activity.ts";
import { type OversizedFiles, type OwnedFilesExceeded } from "../board/activity_types.ts";
import type { IncrementalJournal } from "../journal/incremental.ts";
import { readJournal, viewFor } from "../journal/journal_file.ts";
import { readRunState } from "../runs/run_state.ts";
import { journalPath } from "../workspace.ts";
import type { StatusPart } from "./status.ts";

/** One task `status` names. */
export interface GuardedTask {
  task_id: string;
  /** Where it stands (the board's words: needs_review, gated, failed, queued …). */
  state: string;
  /** Protected paths its diff touches (it lands only on an operator's merge). */
  protected_paths?: string[];
  /** Why its paths could not be read (it waits for an operator all the same). */
  protected_error?: string;
  /** Files over `max_landed_file_mb` its diff adds or grows (it lands only on an operator's merge). */
  oversized_files?: OversizedFiles;
  owned_files_exceeded?: OwnedFilesExceeded;
}

/** The tasks of `state` with something to say (pure). */
export function guardedTasks(state: ActivityState): GuardedTask[] {
  const out: GuardedTask[] = [];
  for (const id of state.order) {
    const t = state.tasks.get(id)!;
    if (t.state === "merged" || t.state === "cancelled") continue;
    const guarded = (t.protected_paths?.length ?? 0) > 0 || t.protected_error !== undefined;
    if (!guarded && !t.owned_files_exceeded && !t.oversized_files) continue;
    out.push({
      task_id: id,
      state: t.state,
      ...(guarded ? { protected_paths: t.protected_paths ?? [] } : {}),
      ...(t.protected_error ? { protected_error: t.protected_error } : {}),
      ...(t.oversized_files ? { oversized_files: t.oversized_files } : {}),
      ...(t.owned_files_exceeded ? { owned_files_exceeded: t.owned_files_exceeded } : {}),
    });
  }
  return out;
}

const views = new Map<string, IncrementalJournal<ActivityState>>();

/** The current run's guarded tasks (none without a run). */
export const guardedPart: StatusPart = async (app) => {
  const state = await readRunState(app.paths);
  if (!state) return [];
  const path = journalPath(app.paths, state.run_id);
  try {
    return guardedTasks((await readJournal(path, viewFor(path, views, ACTIVITY_SINK))).state);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw e;
  }
};
