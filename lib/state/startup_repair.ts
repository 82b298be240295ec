/**
 * Start-up repair of the workspace's state files (DESIGN.md §6): JSONL metrics, the access log
 * and the webhook ledger keep every line that parses; an unreadable task-backlog.json export is
 * moved aside (it is rebuilt from the YAML specs). Run journals are never touched.
 */
import { join } from "node:path";
import { backlogExportPath } from "../tasks/persist.ts";
import type { WorkspacePaths } from "../workspace.ts";
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
