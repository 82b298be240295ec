/** Runs on disk: `.sdd/runs/<run_id>/journal.jsonl`. */
import { HttpError } from "../http/errors.ts";
import { isValidId, requireId } from "../ids.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import { projectJournal } from "../board/projection.ts";
import type { JsonValue } from "../journal/canonical_json.ts";
import { readRunState } from "../orchestrator/run_state.ts";
import { processAlive } from "../util/process_alive.ts";

/** The journal path of an existing run; 400 for a bad id, 404 when the run does not exist. */
export async function requireRunJournal(paths: WorkspacePaths, runId: string): Promise<string> {
  requireId("run_id", runId);
  const path = journalPath(paths, runId);
  try {
    const info = await Deno.stat(path);
    if (info.isFile) return path;
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  throw new HttpError(404, "unknown_run", `no run ${JSON.stringify(runId)} (no ${path})`);
}

/** How a run stands, from its journal and whether its process lives. */
export type RunStatus = "running" | "completed" | "failed" | "stopped" | "interrupted";

/** One entry of `GET /review-board/runs`. */
export interface RunSummary {
  run_id: string;
  event_count: number;
  journal_head: string;
  journal_verified: boolean;
  started: JsonValue | null;
  completed: JsonValue | null;
  /** `completed.status`, or running (its process lives) / interrupted (it is gone). */
  status: RunStatus;
  /** Cards per board column. */
  counts: Record<string, number>;
}

/**
 * A run's status (pure): a live process runs it (also after an earlier completion: it was
 * resumed); else its last `run_completed` says; else it was interrupted.
 */
function runStatus(completed: JsonValue | null, live: boolean): RunStatus {
  if (live) return "running";
  const status = (completed as { status?: unknown } | null)?.status;
  return status === "completed" || status === "failed" || status === "stopped"
    ? status
    : "interrupted";
}

async function firstRowTs(path: string): Promise<string> {
  const file = await Deno.open(path);
  try {
    const buffer = new Uint8Array(8192);
    const n = (await file.read(buffer)) ?? 0;
    const line = new TextDecoder().decode(buffer.subarray(0, n)).split("\n")[0];
    const ts = /"ts":"([^"]*)"/.exec(line)?.[1];
    return ts ?? "";
  } finally {
    file.close();
  }
}

/** Every run with a journal, newest first (by the first row's time, then run id). */
export async function listRuns(paths: WorkspacePaths): Promise<RunSummary[]> {
  const state = await readRunState(paths);
  const liveRun = state?.status === "running" && processAlive(state.pid) ? state.run_id : null;
  const found: { runId: string; path: string; ts: string }[] = [];
  try {
    for await (const entry of Deno.readDir(paths.runs)) {
      if (!entry.isDirectory || !isValidId(entry.name)) continue;
      const path = journalPath(paths, entry.name);
      try {
        found.push({ runId: entry.name, path, ts: await firstRowTs(path) });
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  found.sort((a, b) => (a.ts === b.ts ? (a.runId < b.runId ? 1 : -1) : a.ts < b.ts ? 1 : -1));
  const runs: RunSummary[] = [];
  for (const { runId, path } of found) {
    const { receipt } = await projectJournal(runId, path);
    runs.push({
      run_id: runId,
      event_count: receipt.event_count,
      journal_head: receipt.journal_head,
      journal_verified: receipt.journal_verified,
      started: receipt.board.run.started,
      completed: receipt.board.run.completed,
      status: runStatus(receipt.board.run.completed, runId === liveRun),
      counts: Object.fromEntries(
        Object.entries(receipt.board.columns).map(([column, cards]) => [column, cards.length]),
      ),
    });
  }
  return runs;
}
