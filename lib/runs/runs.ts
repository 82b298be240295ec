/** Runs on disk: `.sdd/runs/<run_id>/journal.jsonl`. */
import { NotFoundError } from "../errors.ts";
import { isValidId, requireId } from "../ids.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import { type JournalSummary, journalSummary } from "../board/projection.ts";
import { readRunState } from "./run_state.ts";
import { processAlive } from "../util/process_alive.ts";
import { IncrementalJournal } from "../journal/incremental.ts";
import { readJournal, viewFor } from "../journal/journal_file.ts";
import {
  type FileIdentity,
  fileIdentity,
  sameIdentity,
  settledBefore,
} from "../journal/file_identity.ts";
import { outcomeOf, RUN_TRAIL_SINK, type RunOutcome, runStatusOf, type RunTrail } from "./trail.ts";
import type { RunSummary } from "./summary_types.ts";
import { damageOf } from "./journal_damage.ts";

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

const trailViews = new Map<string, IncrementalJournal<RunTrail>>();
const settledOutcomes = new Map<string, { identity: FileIdentity; outcome: RunOutcome }>();
const MAX_OUTCOMES = 4096;

/**
 * How the tasks of the run journal at `path` ended. A journal unchanged since it settled is not
 * read again (as the runs list's board summaries); a live one is read incrementally.
 */
export async function runOutcome(path: string): Promise<RunOutcome> {
  const statAt = Date.now();
  const identity = await fileIdentity(path);
  const hit = settledOutcomes.get(path);
  if (hit && identity && sameIdentity(hit.identity, identity)) return hit.outcome;
  const settled = identity !== undefined && settledBefore(identity, statAt);
  const view = settled
    ? new IncrementalJournal(RUN_TRAIL_SINK)
    : viewFor(path, trailViews, RUN_TRAIL_SINK);
  const snapshot = await readJournal(path, view);
  const damage = damageOf(snapshot.walker.firstFault, snapshot.byteLength);
  const outcome = { ...outcomeOf(snapshot.state), ...(damage ? { damage } : {}) };
  if (settled && snapshot.byteLength === identity.size) {
    settledOutcomes.delete(path);
    settledOutcomes.set(path, { identity, outcome });
    while (settledOutcomes.size > MAX_OUTCOMES) {
      settledOutcomes.delete(settledOutcomes.keys().next().value!);
    }
  }
  return outcome;
}

/** Every run with a journal, newest first (by the first row's time, then run id). */
export async function listRuns(paths: WorkspacePaths): Promise<RunSummary[]> {
  const state = await readRunState(paths);
  const liveRun = state?.status === "running" && processAlive(state.pid) ? state.run_id : null;
  const found: { runId: string; summary: JournalSummary }[] = [];
  try {
    // Listed in place: a directory of a few hundred names reads in microseconds.
    for (const entry of Deno.readDirSync(paths.runs)) {
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
  return await Promise.all(found.map(async ({ runId, summary: { firstTs: _, ...summary } }) => {
    const outcome = await runOutcome(journalPath(paths, runId));
    return {
      run_id: runId,
      ...summary,
      ...(outcome.damage ? { journal_damage: outcome.damage } : {}),
      status: runStatusOf(outcome, runId === liveRun),
      failed: outcome.failed,
      cancelled: outcome.cancelled,
    };
  }));
}
