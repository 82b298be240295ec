/**
 * Every writer of workspace state works on a fresh workspace, one with no `.sdd/` at all (the
 * real Codex run died on `writefile '…/.sdd/metrics/cost.jsonl'` when an agent exited without
 * reporting and its spend was the first thing written). Each row runs one writer in its own new
 * workspace and checks the file it names exists afterwards.
 */
import assert from "node:assert/strict";
import { ServerLog } from "../lib/server/server_log.ts";
import { publishServer } from "../lib/discovery/record.ts";
import { join } from "node:path";
import { CooldownTracker, saveCooldowns } from "../lib/agents/cooldown.ts";
import { emptyCostReport, type UsageReport } from "../lib/cost/report.ts";
import { writeHeartbeat, writePidFile } from "../lib/agents/runtime_files.ts";
import { appendAuditEntry, auditPaths, loadAuditKey } from "../lib/audit/store.ts";
import { writeSpend } from "../lib/cost/spend.ts";
import { writeDebugBundle } from "../lib/debug/bundle.ts";
import { AccessLog } from "../lib/http/access_log.ts";
import { appendEvents } from "../lib/journal/journal_file.ts";
import { writeRunState } from "../lib/runs/run_state.ts";
import { SpendTracker } from "../lib/cost/budget.ts";
import { claimStoreOwnership, releaseStoreOwnership } from "../lib/tasks/owner.ts";
import { ensureBacklogDirs, writeBacklogExport } from "../lib/tasks/persist.ts";
import { appendLedgerRecord } from "../lib/verification/ledger.ts";
import { journalPath, type WorkspacePaths, workspacePaths } from "../lib/workspace.ts";
import { appendStateLines } from "../lib/util/locked_append.ts";
import { writeFileAtomic } from "../lib/util/atomic_write.ts";
import { sampleEvents } from "./helpers.ts";

const USAGE: UsageReport = {
  microUsd: 10,
  byModel: { m: { inputTokens: 1, outputTokens: 1, microUsd: 10 } },
  source: "reported",
};

/** [name, writer, the file it must have written]. */
const WRITERS: [string, (p: WorkspacePaths) => Promise<unknown>, (p: WorkspacePaths) => string][] =
  [
    [
      "spend of an agent that exited without reporting (SpendTracker.record)",
      (p) => new SpendTracker(p, { name: "fake" }, emptyCostReport()).record("t1", "s1", USAGE),
      (p) => p.costRecords,
    ],
    [
      "cost_report.json (writeSpend)",
      (p) => writeSpend(p, emptyCostReport(), []),
      (p) => p.costReport,
    ],
    [
      "rate_limits.json (saveCooldowns)",
      (p) => saveCooldowns(p.rateLimits, new CooldownTracker(), 0),
      (p) => p.rateLimits,
    ],
    [
      "orchestrator.json (writeRunState)",
      (p) =>
        writeRunState(p, {
          run_id: "r1",
          pid: 1,
          plan: "plan.yaml",
          url: "http://127.0.0.1:1",
          started_at: 0,
          status: "running",
        }),
      (p) => p.runState,
    ],
    [
      "PID file (writePidFile)",
      (p) =>
        writePidFile(p.runtime, {
          session_id: "s1",
          pid: 1,
          pgid: 1,
          adapter: "fake",
          command: ["x"],
          log_path: "x.log",
          started_at: 0,
        }),
      (p) => join(p.pids, "s1.json"),
    ],
    [
      "heartbeat (writeHeartbeat)",
      (p) =>
        writeHeartbeat(p.runtime, {
          session_id: "s1",
          pid: 1,
          alive: true,
          last_output_at: null,
          log_bytes: 0,
          updated_at: 0,
        }),
      (p) => join(p.runtime, "heartbeats", "s1.json"),
    ],
    [
      "verification ledger (appendLedgerRecord)",
      (p) =>
        appendLedgerRecord(p, {
          task_id: "t1",
          session_id: "s1",
          timestamp: 0,
          tests_run: false,
          quality_gates_run: false,
          completion_signals_checked: false,
        } as never),
      (p) => p.verificationNudges,
    ],
    [
      "task-store.owner (claimStoreOwnership)",
      async (p) => {
        await claimStoreOwnership(p, "test");
        assert.ok((await Deno.stat(p.taskStoreOwner)).isFile);
        await releaseStoreOwnership(p);
        await Deno.writeTextFile(p.taskStoreOwner, "");
      },
      (p) => p.taskStoreOwner,
    ],
    [
      "task backlog export (writeBacklogExport)",
      (p) => writeBacklogExport(p, [], { now: "now" }),
      (p) => p.taskBacklogExport,
    ],
    ["backlog buckets (ensureBacklogDirs)", (p) => ensureBacklogDirs(p), (p) => p.backlog],
    [
      "access log (AccessLog.flush)",
      (p) => {
        const log = new AccessLog(p.accessLog);
        log.record(
          { ts: 0, method: "GET", path: "/", status: 200, ms: 1, principal: null } as never,
        );
        log.flush();
        return Promise.resolve();
      },
      (p) => p.accessLog,
    ],
    [
      "journal (appendEvents)",
      (p) => appendEvents(journalPath(p, "r1"), sampleEvents()),
      (p) => journalPath(p, "r1"),
    ],
    [
      "audit log and key (appendAuditEntry)",
      async (p) => {
        const a = auditPaths(p.audit);
        await appendAuditEntry(a, { event: "test", principal: "test", data: {} }, {
          key: await loadAuditKey(a),
        });
      },
      (p) => join(p.audit, "audit.jsonl"),
    ],
    [
      "server log (ServerLog.line)",
      (p) => Promise.resolve(new ServerLog(p).line("listening")),
      (p) => p.serverLog,
    ],
    [
      "server record (publishServer)",
      (p) =>
        publishServer(p, {
          pid: 1,
          url: "http://127.0.0.1:1",
          instance: "00",
          workspace: p.root,
          started_at: "now",
        }),
      (p) => p.serverRecord,
    ],
    [
      "debug bundle (writeDebugBundle)",
      (p) => writeDebugBundle(p.root, { doctor: [], env: {} }),
      (p) => p.debug,
    ],
    [
      "any atomic state file (writeFileAtomic)",
      (p) => writeFileAtomic(p.serverLog, "x"),
      (p) => p.serverLog,
    ],
    [
      "any appended state file (appendStateLines)",
      (p) => appendStateLines(p.webhookLedger, "{}\n"),
      (p) => p.webhookLedger,
    ],
  ];

for (const [name, write, written] of WRITERS) {
  Deno.test(`fresh workspace: ${name} creates its directory`, async () => {
    const root = await Deno.makeTempDir({ prefix: "fresh-ws-" });
    try {
      const paths = workspacePaths(root);
      await write(paths);
      assert.ok(await Deno.stat(written(paths)), `${written(paths)} was written`);
    } finally {
      await Deno.remove(root, { recursive: true });
    }
  });
}
