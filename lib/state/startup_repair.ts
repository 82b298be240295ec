/**
 * Start-up repair of the workspace's state files (DESIGN.md §6): JSONL metrics, the access log
 * and the webhook ledger keep every line that parses; an unreadable task-backlog.json export is
 * moved aside (it is rebuilt from the YAML specs); temporary files of atomic writes whose writer
 * is gone (killed mid-write, or stopped by a full disk) are removed. Run journals are never
 * touched.
 */
import { join, relative } from "node:path";
import { backlogExportPath } from "../tasks/persist.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { tempWriterPid } from "../util/atomic_write.ts";
import { processAlive } from "../util/process_alive.ts";
import { fileStamp, repairJsonl } from "./repair_jsonl.ts";

/** The JSONL files repaired on start. */
async function repairableJsonlFiles(paths: WorkspacePaths): Promise<string[]> {
  const files = [
    paths.accessLog,
    paths.webhookLedger,
  ];
  try {
    for await (const e of Deno.readDir(paths.metrics)) {
      if (e.isFile && e.name.endsWith(".jsonl")) files.push(join(paths.metrics, e.name));
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return files.sort();
}

/** Repair what needs it; returns one operator-facing line per repair. */
export async function repairStateOnStart(
  paths: WorkspacePaths,
  now = new Date(),
): Promise<string[]> {
  const messages: string[] = [];
  for (const file of await repairableJsonlFiles(paths)) {
    const r = await repairJsonl(file, now);
    if (r?.dropped) {
      messages.push(
        `repaired ${file}: kept ${r.kept} line(s), dropped ${r.dropped} unparseable line(s) ` +
          `(first: ${JSON.stringify(r.sample)}), moved to ${r.movedTo}`,
      );
    }
  }
  const orphans = await removeOrphanedTemps(paths);
  if (orphans.length > 0) {
    messages.push(
      `removed ${orphans.length} temporary file(s) of interrupted writes: ` +
        orphans.slice(0, 3).map((p) => relative(paths.root, p)).join(", ") +
        (orphans.length > 3 ? ", …" : ""),
    );
  }
  const exportFile = backlogExportPath(paths);
  try {
    const text = await Deno.readTextFile(exportFile);
    JSON.parse(text);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) {
      const movedTo = `${exportFile}.corrupt-${fileStamp(now)}`;
      await Deno.rename(exportFile, movedTo);
      messages.push(
        `moved unreadable ${exportFile} to ${movedTo} (${(e as Error).message}); ` +
          "it is rebuilt from the task specs in .sdd/backlog/",
      );
    }
  }
  return messages;
}

/**
 * Remove every `<name>.tmp-<pid>-<suffix>` under `.sdd/` (the agents' worktrees excepted: those
 * are the user's files) whose writer is no longer running: a write that never reached its rename.
 * The file it was replacing is intact. Returns the removed paths.
 */
async function removeOrphanedTemps(paths: WorkspacePaths): Promise<string[]> {
  const removed: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(dir));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return;
      throw e;
    }
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory && path !== paths.worktrees) await walk(path);
      if (!entry.isFile) continue;
      const pid = tempWriterPid(entry.name);
      if (pid === undefined || processAlive(pid)) continue;
      await Deno.remove(path).then(() => removed.push(path), () => {});
    }
  };
  await walk(paths.sdd);
  return removed.sort();
}
