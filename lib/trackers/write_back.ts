/**
 * Opt-in write-back (`trackers.<name>.comment_on_land: true`): when a task made from a ticket
 * lands (its task goes CLOSED after `task_merged`), the service comments on the ticket through
 * the tracker's API with the merge commit and the board link — only ever in the tracker's
 * configured `project` (lib/trackers/scope.ts). A failed comment is reported and recorded, never
 * retried in a loop and never blocks the run.
 */
import { join } from "node:path";
import { onTaskChange } from "../tasks/changes.ts";
import type { Task } from "../tasks/task.ts";
import type { WorkspacePaths } from "../workspace.ts";
import type { ApiAccess } from "./adapter.ts";
import { writeBackRefusal } from "./scope.ts";
import type { TrackerSettings } from "./settings.ts";
import type { TrackerRuntimeStore } from "./state.ts";

/** The comment posted on a landed ticket (pure). */
export function landingComment(
  o: { taskId: string; commit?: string; runId?: string; boardUrl?: string },
): string {
  const lines = [
    o.commit
      ? `Landed: task \`${o.taskId}\` was verified and merged in ${o.commit}.`
      : `Landed: task \`${o.taskId}\` was verified and merged.`,
  ];
  if (o.boardUrl && o.runId) {
    lines.push(
      `Review board: ${o.boardUrl}/dashboard/review-board?run=${o.runId}&task=${o.taskId}`,
    );
  }
  return lines.join("\n");
}

/** The run and merge commit of `taskId`'s `task_merged` row, newest run first. */
export async function findMergeCommit(
  paths: WorkspacePaths,
  taskId: string,
): Promise<{ runId: string; commit?: string } | undefined> {
  const runs: string[] = [];
  try {
    for await (const e of Deno.readDir(paths.runs)) if (e.isDirectory) runs.push(e.name);
  } catch {
    return undefined;
  }
  const needle = JSON.stringify(taskId);
  for (const runId of runs.sort().reverse()) {
    let text: string;
    try {
      text = await Deno.readTextFile(join(paths.runs, runId, "journal.jsonl"));
    } catch {
      continue;
    }
    for (const line of text.split("\n").reverse()) {
      if (!line.includes('"task_merged"') || !line.includes(needle)) continue;
      try {
        const row = JSON.parse(line);
        const data = row.data ?? row;
        if (row.type === "task_merged" && data.task_id === taskId) {
          return { runId, commit: typeof data.commit === "string" ? data.commit : undefined };
        }
      } catch { /* a torn line: keep looking */ }
    }
  }
  return undefined;
}

/** What write-back needs. */
export interface WriteBackDeps {
  paths: WorkspacePaths;
  settings: TrackerSettings[];
  access: (s: TrackerSettings) => ApiAccess;
  runtime: TrackerRuntimeStore;
  /** The board's base URL (public_url_base, else the running server's). */
  boardUrl: (s: TrackerSettings) => Promise<string | undefined>;
  warn: (line: string) => void;
}

/** Comment on landed tickets until the returned function is called; it waits for comments in flight. */
export function startWriteBack(deps: WriteBackDeps): () => Promise<void> {
  const byName = new Map(
    deps.settings.filter((s) => s.commentOnLand && s.adapter).map((s) => [s.name, s]),
  );
  if (byName.size === 0) return () => Promise.resolve();
  const inFlight = new Set<Promise<void>>();
  const unsubscribe = onTaskChange((change) => {
    if (change.to !== "CLOSED" || change.workspace !== deps.paths.root) return;
    const s = change.task.source && byName.get(change.task.source.tracker);
    if (!s) return;
    const p = comment(deps, s, change.task).finally(() => inFlight.delete(p));
    inFlight.add(p);
  });
  return async () => {
    unsubscribe();
    await Promise.all(inFlight);
  };
}

async function comment(deps: WriteBackDeps, s: TrackerSettings, task: Task): Promise<void> {
  const at = () => new Date().toISOString();
  const refused = writeBackRefusal(s, task.source!);
  if (refused) {
    deps.warn(`tracker ${s.name}: not commenting on ${task.source!.ref}: ${refused}`);
    deps.runtime.update(s.name, {
      last_comment: { at: at(), outcome: "refused", detail: `${task.source!.ref}: ${refused}` },
    });
    return;
  }
  try {
    const merged = await findMergeCommit(deps.paths, task.id);
    const text = landingComment({
      taskId: task.id,
      commit: merged?.commit,
      runId: merged?.runId,
      boardUrl: await deps.boardUrl(s),
    });
    await s.adapter!.comment(deps.access(s), task.source!.ids ?? {}, text);
    deps.runtime.update(s.name, {
      last_comment: { at: at(), outcome: "ok", detail: `${task.source!.ref}: ${task.id} landed` },
    });
  } catch (e) {
    const message = `cannot comment on ${task.source!.ref}: ${(e as Error).message}`;
    deps.warn(`tracker ${s.name}: ${message}`);
    deps.runtime.update(s.name, { last_comment: { at: at(), outcome: "failed", detail: message } });
  }
}
