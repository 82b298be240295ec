/**
 * Keeping a session's log with its run: the log (`.sdd/runtime/<session>.log`) is copied to
 * `.sdd/runs/<run>/logs/<session>.log` and its digest journaled (`task_log_captured`), so the
 * board's task detail shows what the attempt said and can prove the bytes are the ones captured.
 */
import { dirname } from "node:path";
import * as ev from "../journal/events.ts";
import { sha256Hex } from "../journal/hash.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { journalPath, runLogPath, type WorkspacePaths } from "../workspace.ts";

/** Which session's log to keep, and where it is now. */
export interface KeptLog {
  runId: string;
  taskId: string;
  sessionId: string;
  /** The session's log as it was written (a log that does not exist is nothing to keep). */
  logPath: string;
}

/** Keep `log` in its run directory and journal its digest; false when there was no log. */
export async function keepSessionLog(paths: WorkspacePaths, log: KeptLog): Promise<boolean> {
  let bytes: Uint8Array;
  try {
    bytes = await Deno.readFile(log.logPath);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
  const path = runLogPath(paths, log.runId, log.sessionId);
  await Deno.mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, bytes);
  await appendEvents(journalPath(paths, log.runId), [ev.taskLogCaptured({
    task_id: log.taskId,
    session_id: log.sessionId,
    sha256: "sha256:" + sha256Hex(bytes),
    bytes: bytes.length,
  })]);
  return true;
}
