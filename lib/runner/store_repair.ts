/**
 * The task store reconciled with the run journals when `service run` starts. The journal is
 * written before the store, so a store write that failed once `task_merged` was durable (a full
 * disk, a kill between the two) leaves a task the journal says landed while the store still says
 * DONE — and a resumed run would land it again: a second `task_merged`, a second pull request.
 * Every task whose own run's journal says `task_merged` (in its verified rows) is CLOSED in the
 * store whatever the store says, and each repair is said in one line.
 */
import type { JournalEvent } from "../journal/row.ts";
import { readEvent } from "../journal/event_reader.ts";
import { IncrementalJournal, type RowSink } from "../journal/incremental.ts";
import { readJournal } from "../journal/journal_file.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";

/** A `task_merged` row of a run's journal. */
export interface MergedRow {
  seq: number;
  commit?: string;
  pr?: string;
}

/** One task the store holds as not landed while its run's journal says it landed. */
export interface StoreRepair {
  taskId: string;
  runId: string;
  /** What the store said. */
  was: Task["status"];
  row: MergedRow;
}

/** The tasks to close (pure): not CLOSED in the store, merged in their own run's journal. */
export function landedButOpen(
  tasks: readonly Pick<Task, "id" | "run_id" | "status">[],
  merged: ReadonlyMap<string, ReadonlyMap<string, MergedRow>>,
): StoreRepair[] {
  return tasks.flatMap((t) => {
    if (t.status === "CLOSED" || !t.run_id) return [];
    const row = merged.get(t.run_id)?.get(t.id);
    return row ? [{ taskId: t.id, runId: t.run_id, was: t.status, row }] : [];
  });
}

/** The line that says what was repaired. */
function repairLine(r: StoreRepair): string {
  const how = r.row.pr
    ? ` through ${r.row.pr}`
    : r.row.commit
    ? ` as ${r.row.commit.slice(0, 10)}`
    : "";
  return `repaired: ${r.taskId} was merged${how} (journal seq ${r.row.seq} of ${r.runId}) but ` +
    `the task store said ${r.was}; it is CLOSED now and is not run again`;
}

const MERGED_SINK: RowSink<Map<string, MergedRow>> = {
  init: () => new Map(),
  apply(state, row: JournalEvent, index) {
    const event = row.type === "task_merged" ? readEvent(row) : undefined;
    if (event?.type !== "task_merged" || state.has(event.task_id)) return;
    state.set(event.task_id, {
      seq: index,
      ...(event.commit === undefined ? {} : { commit: event.commit }),
      ...(event.pr === undefined ? {} : { pr: event.pr }),
    });
  },
  clone: (s) => new Map(s),
  reads: (type) => type === "task_merged" ? "data" : "nothing",
};

/** The `task_merged` rows of a run's journal that verify (those before its first bad row). */
export async function mergedRows(
  paths: WorkspacePaths,
  runId: string,
): Promise<Map<string, MergedRow>> {
  const snapshot = await readJournal(
    journalPath(paths, runId),
    new IncrementalJournal(MERGED_SINK),
  );
  const fault = snapshot.walker.firstFault?.seq;
  if (fault === undefined) return snapshot.state;
  return new Map([...snapshot.state].filter(([, row]) => row.seq < fault));
}

/** Close every task of `store` its run's journal says landed; one line per repair. */
export async function repairStoreFromJournals(
  paths: WorkspacePaths,
  store: TaskStore,
): Promise<string[]> {
  const tasks = store.list().filter((t) => t.status !== "CLOSED" && t.run_id);
  const merged = new Map<string, Map<string, MergedRow>>();
  for (const runId of new Set(tasks.map((t) => t.run_id!))) {
    merged.set(runId, await mergedRows(paths, runId));
  }
  const lines: string[] = [];
  for (const repair of landedButOpen(tasks, merged)) {
    await store.closeLandedPerJournal(repair.taskId);
    lines.push(repairLine(repair));
  }
  return lines;
}
