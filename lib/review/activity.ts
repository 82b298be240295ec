/**
 * The run outline and task detail the board page shows beside the projection: read from the
 * run's journal (verified as it is read) and the session logs kept in the run directory. A log
 * is served only with whether its bytes still re-hash to the digest the journal chained.
 */
import { ACTIVITY_SINK, type ActivityState, outline, outlineTask } from "../board/activity.ts";
import { NotFoundError } from "../errors.ts";
import type { IncrementalJournal } from "../journal/incremental.ts";
import { readJournal, viewFor } from "../journal/journal_file.ts";
import { createHash } from "node:crypto";
import { requireId } from "../ids.ts";
import { requireRunJournal } from "../runs/runs.ts";
import { journalPath, runLogPath, type WorkspacePaths } from "../workspace.ts";
import { journalContradiction } from "../audit/workspace_check.ts";
import { evidenceMarks } from "./evidence_marks.ts";
import { evidenceAbsence } from "./evidence.ts";
import type { RunOutline, ServedLog, TaskDetailResponse } from "./types.ts";
import type { TaskActivity } from "../board/activity_types.ts";

/** Bytes of a session log's end served with the task detail. */
const LOG_TAIL_BYTES = 16 * 1024;

const views = new Map<string, IncrementalJournal<ActivityState>>();

async function activityOf(paths: WorkspacePaths, runId: string) {
  const path = await requireRunJournal(paths, runId);
  return await readJournal(path, viewFor(path, views, ACTIVITY_SINK));
}

/** Where `taskId` stands in the run at the journal's path (undefined: the run has no such task). */
export async function taskStateAt(
  path: string,
  taskId: string,
): Promise<TaskActivity["state"] | undefined> {
  return (await readJournal(path, viewFor(path, views, ACTIVITY_SINK))).state.tasks.get(taskId)
    ?.state;
}

/** Every task of a run: planned, waiting, blocked (with why) and those on the board. */
export async function runOutline(paths: WorkspacePaths, runId: string): Promise<RunOutline> {
  const snapshot = await activityOf(paths, runId);
  const contradiction = snapshot.walker.verified
    ? await journalContradiction(paths, runId, journalPath(paths, runId))
    : undefined;
  return {
    run_id: runId,
    journal_verified: snapshot.walker.verified && !contradiction,
    tasks: outline(snapshot.state),
    already_landed: snapshot.state.already_landed,
    ...(snapshot.state.ignored_count > 0
      ? { ignored_rows: { count: snapshot.state.ignored_count, rows: snapshot.state.ignored } }
      : {}),
    ...(contradiction
      ? {
        audit_disagreement: {
          row: contradiction.rowSeq,
          audit_entry: contradiction.auditSeq,
          message: contradiction.message,
        },
      }
      : {}),
    evidence: await evidenceMarks(paths, {
      runId,
      journalVerified: snapshot.walker.verified,
      sealed: new Map(
        [...snapshot.state.tasks.values()].flatMap((t) =>
          t.evidence_sealed ? [[t.task_id, t.evidence_sealed]] : []
        ),
      ),
    }),
  };
}

/** One task's attempts, outcomes, reasons, summaries and log tails; 404 for a task not in the run. */
export async function taskDetail(
  paths: WorkspacePaths,
  runId: string,
  taskId: string,
): Promise<TaskDetailResponse> {
  requireId("task_id", taskId);
  const snapshot = await activityOf(paths, runId);
  const activity = snapshot.state.tasks.get(taskId);
  if (!activity) {
    throw new NotFoundError("unknown_task", `run ${runId} has no task ${taskId}`);
  }
  const attempts = await Promise.all(activity.attempts.map(async (a) => {
    const { log, ...rest } = a;
    return log
      ? { ...rest, log: await serveLog(runLogPath(paths, runId, a.session_id), log) }
      : rest;
  }));
  // Said here, so the board requests no bundle that is not there (a 404 the browser logs).
  const absent = await evidenceAbsence(paths, runId, taskId);
  return {
    run_id: runId,
    journal_verified: snapshot.walker.verified,
    ...(absent ? { evidence_absent: absent } : {}),
    task: { ...outlineTask(snapshot.state, activity), attempts },
  };
}

async function serveLog(path: string, chained: { sha256: string; bytes: number }) {
  let read: { sha256: string; tail: Uint8Array; cut: boolean };
  try {
    read = await digestAndTail(path, LOG_TAIL_BYTES);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
    return { ...chained, verified: false, missing: true } satisfies ServedLog;
  }
  const served: ServedLog = { ...chained, verified: "sha256:" + read.sha256 === chained.sha256 };
  let start = 0;
  if (read.cut) {
    const newline = read.tail.indexOf(10);
    start = newline === -1 ? 0 : newline + 1;
    served.truncated = true;
  }
  served.tail = new TextDecoder().decode(read.tail.subarray(start));
  return served;
}

/**
 * The SHA-256 of a file and its last `tailBytes`, read in pieces: a log may be as large as its
 * cap (agent_log_max_mb), and a request for a card's detail must not hold all of it at once.
 */
async function digestAndTail(
  path: string,
  tailBytes: number,
): Promise<{ sha256: string; tail: Uint8Array; cut: boolean }> {
  using file = await Deno.open(path);
  const hash = createHash("sha256");
  const piece = new Uint8Array(256 * 1024);
  let tail: Uint8Array = new Uint8Array(0);
  let total = 0;
  for (let got = await file.read(piece); got !== null; got = await file.read(piece)) {
    const bytes = piece.subarray(0, got);
    hash.update(bytes);
    total += got;
    tail = keepLast(tail, bytes, tailBytes);
  }
  return { sha256: hash.digest("hex"), tail, cut: total > tail.length };
}

/** The last `n` bytes of `before` followed by `more`. */
function keepLast(before: Uint8Array, more: Uint8Array, n: number): Uint8Array {
  if (more.length >= n) return more.slice(more.length - n);
  const keep = Math.min(before.length, n - more.length);
  const out = new Uint8Array(keep + more.length);
  out.set(before.subarray(before.length - keep));
  out.set(more, keep);
  return out;
}
