/** Runs on disk: `.sdd/runs/<run_id>/journal.jsonl`. */
import { NotFoundError } from "../errors.ts";
import { isValidId, requireId } from "../ids.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import { type JournalSummary, journalSummary } from "../board/projection.ts";
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
  throw new NotFoundError("unknown_run", `no run ${JSON.stringify(runId)} (no ${path})`);
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

/** Every run with a journal, newest first (by the first row's time, then run id). */
export async function listRuns(paths: WorkspacePaths): Promise<RunSummary[]> {
  const state = await readRunState(paths);
  const liveRun = state?.status === "running" && processAlive(state.pid) ? state.run_id : null;
  const found: { runId: string; summary: JournalSummary }[] = [];
  try {
    for await (const entry of Deno.readDir(paths.runs)) {
      if (!entry.isDirectory || !isValidId(entry.name)) continue;
      try {
        const summary = await journalSummary(entry.name, journalPath(paths, entry.name));
        found.push({ runId: entry.name, summary });
      } catch (e) {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      }
    }
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  found.sort((a, b) => {
    const [x, y] = [a.summary.firstTs, b.summary.firstTs];
    return x === y ? (a.runId < b.runId ? 1 : -1) : x < y ? 1 : -1;
  });
  return found.map(({ runId, summary: { firstTs: _, ...summary } }) => ({
    run_id: runId,
    ...summary,
    status: runStatus(summary.completed, runId === liveRun),
  }));
}
