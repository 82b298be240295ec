/**
 * The tasks of a run that closed with nothing to land (`task_unchanged`, not merged since), read
 * from its journal: a run's last line must not say "every task landed" when some landed nothing.
 */
import { readRow } from "../journal/event_reader.ts";

/** Ids of the tasks whose last outcome in `journal` is `task_unchanged`, in journal order. */
export async function unchangedTasks(journal: string): Promise<string[]> {
  const text = await Deno.readTextFile(journal).catch(() => "");
  const unchanged = new Set<string>();
  for (const line of text.split("\n")) {
    // Only the two outcomes matter; the rest of the journal is not parsed.
    if (!line.includes('"task_unchanged"') && !line.includes('"task_merged"')) continue;
    let row;
    try {
      row = readRow(JSON.parse(line));
    } catch {
      continue; // a torn line
    }
    if (!row || !("type" in row)) continue;
    if (row.type === "task_unchanged") unchanged.add(row.task_id);
    else if (row.type === "task_merged") unchanged.delete(row.task_id);
  }
  return [...unchanged];
}
