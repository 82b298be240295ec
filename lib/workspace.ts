/** Paths of the service's state inside a workspace (spec "Log and state locations"). */
import { join } from "node:path";

/** Where every piece of state lives, given the workspace root. */
export interface WorkspacePaths {
  root: string;
  sdd: string;
  runs: string;
  audit: string;
  runtime: string;
  metrics: string;
  backlog: string;
  worktrees: string;
  /** `.sdd/runtime/tracker_webhook_ledger.jsonl`: the webhook replay ledger (spec §4.2 rule 5). */
  webhookLedger: string;
  /** `.sdd/runtime/trackers.json`: per-tracker last_processed_ts, last poll and last delivery. */
  trackerState: string;
}

/** The state layout under `root/.sdd`. */
export function workspacePaths(root: string): WorkspacePaths {
  const sdd = join(root, ".sdd");
  return {
    root,
    sdd,
    runs: join(sdd, "runs"),
    audit: join(sdd, "audit"),
    runtime: join(sdd, "runtime"),
    metrics: join(sdd, "metrics"),
    backlog: join(sdd, "backlog"),
    worktrees: join(sdd, "worktrees"),
    webhookLedger: join(sdd, "runtime", "tracker_webhook_ledger.jsonl"),
    trackerState: join(sdd, "runtime", "trackers.json"),
  };
}

/** `.sdd/runs/<run_id>` (the id must already be validated). */
export function runDir(paths: WorkspacePaths, runId: string): string {
  return join(paths.runs, runId);
}

/** `.sdd/runs/<run_id>/journal.jsonl`. */
export function journalPath(paths: WorkspacePaths, runId: string): string {
  return join(paths.runs, runId, "journal.jsonl");
}

/** `.sdd/runs/<run_id>/logs/<session_id>.log`: a session's log, kept with the run when reaped. */
export function runLogPath(paths: WorkspacePaths, runId: string, sessionId: string): string {
  return join(paths.runs, runId, "logs", `${sessionId}.log`);
}

/** `.sdd/runtime/mcp/<run_id>.json`: the MCP configuration handed to a run's agents. */
export function runMcpConfigPath(paths: WorkspacePaths, runId: string): string {
  return join(paths.runtime, "mcp", `${runId}.json`);
}

/** `.sdd/runs/<run_id>/review/diffs/<task_id>.diff`. */
export function diffPath(paths: WorkspacePaths, runId: string, taskId: string): string {
  return join(paths.runs, runId, "review", "diffs", `${taskId}.diff`);
}

/** `.sdd/runs/<run_id>/evidence/<task_id>`: a task's evidence outputs and its `bundle.json`. */
export function evidenceDir(paths: WorkspacePaths, runId: string, taskId: string): string {
  return join(paths.runs, runId, "evidence", taskId);
}

/** Write `bytes` to `path` atomically: a temporary file in the same directory, synced, renamed. */
export async function writeFileAtomic(
  path: string,
  bytes: Uint8Array | string,
  mode?: number,
): Promise<void> {
  const tmp = `${path}.tmp-${Deno.pid}-${crypto.randomUUID().slice(0, 8)}`;
  const data = typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes;
  const file = await Deno.open(tmp, { write: true, createNew: true, mode });
  try {
    let written = 0;
    while (written < data.length) written += await file.write(data.subarray(written));
    await file.syncData();
  } finally {
    file.close();
  }
  try {
    await Deno.rename(tmp, path);
  } catch (e) {
    await Deno.remove(tmp).catch(() => {});
    throw e;
  }
}
