/**
 * Paths of the service's state inside a workspace (spec "Log and state locations"). Every state
 * path is named here once; writers create the directory they write into (a fresh workspace has no
 * `.sdd/` at all).
 */
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
  /** `.sdd/debug`: debug bundles. */
  debug: string;
  /** `.sdd/runtime/pids`: one PID file per live agent session. */
  pids: string;
  /** `.sdd/runtime/ports`: one lease file per port leased to an agent session (DESIGN.md §13). */
  portLeases: string;
  /** `.sdd/runtime/cost_report.json`: the running spend total and budget (DESIGN.md §7). */
  costReport: string;
  /** `.sdd/metrics/cost.jsonl`: one spend record per model per usage. */
  costRecords: string;
  /** `.sdd/runtime/rate_limits.json`: provider cooldowns. */
  rateLimits: string;
  /** `.sdd/runtime/batches.json`: the batch lane's requests (DESIGN.md §15). */
  batches: string;
  /** `.sdd/metrics/tasks.jsonl`: one record per finished agent session. */
  taskMetrics: string;
  /** `.sdd/metrics/verification_nudges.jsonl`: the verification ledger. */
  verificationNudges: string;
  /** `.sdd/runtime/orchestrator.json`: the state of the current or last run. */
  runState: string;
  /** `.sdd/runtime/orchestrator.log`: the log of a detached `service run`. */
  orchestratorLog: string;
  /** `.sdd/runtime/task-backlog.json`: the task store's export. */
  taskBacklogExport: string;
  /** `.sdd/runtime/task-store.owner`: which process owns the task store. */
  taskStoreOwner: string;
  /** `.sdd/runtime/access.jsonl`: the HTTP access log. */
  accessLog: string;
  /** `.sdd/runtime/server.log`: the server's log. */
  serverLog: string;
  /** `.sdd/runtime/server.json`: the workspace's running task server (port, pid, identity). */
  serverRecord: string;
}

/** The state layout under `root/.sdd`. */
export function workspacePaths(root: string): WorkspacePaths {
  const sdd = join(root, ".sdd");
  const runtime = join(sdd, "runtime");
  const metrics = join(sdd, "metrics");
  return {
    root,
    sdd,
    runs: join(sdd, "runs"),
    audit: join(sdd, "audit"),
    runtime,
    metrics,
    backlog: join(sdd, "backlog"),
    worktrees: join(sdd, "worktrees"),
    webhookLedger: join(sdd, "runtime", "tracker_webhook_ledger.jsonl"),
    trackerState: join(sdd, "runtime", "trackers.json"),
    debug: join(sdd, "debug"),
    pids: join(runtime, "pids"),
    portLeases: join(runtime, "ports"),
    costReport: join(runtime, "cost_report.json"),
    costRecords: join(metrics, "cost.jsonl"),
    rateLimits: join(runtime, "rate_limits.json"),
    batches: join(runtime, "batches.json"),
    taskMetrics: join(metrics, "tasks.jsonl"),
    verificationNudges: join(metrics, "verification_nudges.jsonl"),
    runState: join(runtime, "orchestrator.json"),
    orchestratorLog: join(runtime, "orchestrator.log"),
    taskBacklogExport: join(runtime, "task-backlog.json"),
    taskStoreOwner: join(runtime, "task-store.owner"),
    accessLog: join(runtime, "access.jsonl"),
    serverLog: join(runtime, "server.log"),
    serverRecord: join(runtime, "server.json"),
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

/**
 * `.sdd/runtime/checkout-merge.json`: the intent of a merge into the user's checkout, recorded
 * before the checkout is touched and cleared once the branch moved (lib/merge/checkout_intent.ts).
 */
export function checkoutMergePath(paths: WorkspacePaths): string {
  return join(paths.runtime, "checkout-merge.json");
}
