/**
 * The status parts of this service (DESIGN.md §6): `tasks` (counts by status, every run's),
 * `verification_nudge` (spec §2.10, from the ledger at request time), `verification_advice` (what
 * the alert advises, lib/status/verification_advice.ts), `agents` (live agents
 * from PID files, with their last output and progress), `workers` (tasks on remote workers, from the task store), `spend` (cost report against budget), `rate_limits` (parked adapters, with
 * the reset time their limit named or the cooldown), `batches` (the batch lane's requests in
 * flight, with their age), `guarded` (the current run's tasks whose diff touches protected paths
 * or leaves its owned_files, DESIGN.md §18), `ticket_moves` (the current run's tracker tickets
 * whose `move_to` move failed), `tracker_write_back` (landing comments and ticket moves a tracker
 * has not taken yet, or gave up on in the last day), `git_setup` (what the latest run changed of the repository's
 * command-running git setup, lib/status/git_setup.ts).
 * `STATUS_PARTS` lists them in the order the status object shows them.
 */
import { loadCooldowns } from "../agents/cooldown.ts";
import { inFlight, loadBatchLedger } from "../batch/ledger.ts";
import { readRunState, type RunState, stoppedOutcome } from "../runs/run_state.ts";
import { processAlive } from "../util/process_alive.ts";
import { readPidFiles } from "../agents/pid_files.ts";
import { readHeartbeat } from "../agents/runtime_files.ts";
import { quietness } from "../agents/progress_watch.ts";
import { loadConfig } from "../config/load.ts";
import { configuredBudgetUsd, readSpend, SpendFileError, spendSummary } from "../cost/spend.ts";
import type { AppContext } from "../http/context.ts";
import { loadTaskSpecs } from "../tasks/persist.ts";
import { openedTaskStore } from "../tasks/registry.ts";
import { STATUSES } from "../tasks/lifecycle.ts";
import { isFinished, type Task } from "../tasks/task.ts";
import { runOutcome } from "../runs/runs.ts";
import { runStatusOf } from "../runs/trail.ts";
import { damageFix, MISSING_JOURNAL } from "../runs/journal_damage.ts";
import type { JournalDamage } from "../runs/summary_types.ts";
import { relative } from "node:path";
import { readStartFailure } from "../runs/start_failure.ts";
import { journalPath } from "../workspace.ts";
import { readVerificationNudge } from "../verification/nudge.ts";
import type { StatusPart } from "./status.ts";
import { guardedPart } from "./guarded.ts";
import { ticketMovesPart } from "./ticket_moves.ts";
import { trackerWriteBackPart } from "./tracker_write_back.ts";
import { gitSetupPart } from "./git_setup.ts";
import { outsideCommitsPart } from "./outside_commits.ts";
import { verificationAdvicePart } from "./verification_advice.ts";
import { registryFor } from "../workers/registry.ts";
import { workerView } from "../workers/fleet.ts";

/** Task counts by status, of every run: the store's when the server opened it, else the specs'. */
async function taskCounts(app: AppContext): Promise<Record<string, number>> {
  const store = openedTaskStore(app);
  if (store) return (await store).counts();
  return countByStatus((await loadTaskSpecs(app.paths)).tasks);
}

const verificationNudgePart: StatusPart = async (app) => {
  const config = await loadConfig(app.paths.root);
  return await readVerificationNudge(
    app.paths,
    config?.verification_nudge ?? { threshold: 0.3, min_completions: 3 },
  );
};

/**
 * Live agents from their PID files, each with how long since its last output and its last
 * progress, and whether it only reconnects to its model (its heartbeat, lib/agents/progress_watch.ts).
 */
const agentsPart: StatusPart = async (app) => {
  const agents = await readPidFiles(app.paths);
  const now = Date.now() / 1000;
  return await Promise.all(
    agents.filter((a) => a.alive).map(async ({ file: _f, problem: _p, ...rest }) => {
      const heartbeat = await readHeartbeat(app.paths.runtime, rest.session_id);
      return heartbeat ? { ...rest, ...quietness(heartbeat, now) } : rest;
    }),
  );
};

/**
 * Tasks running on remote workers (DESIGN.md §16), from the task store: where each runs, its
 * session and since when its lease was last renewed.
 */
const workersPart: StatusPart = async (app) => {
  const opened = openedTaskStore(app);
  const tasks = opened ? (await opened).list() : (await loadTaskSpecs(app.paths)).tasks;
  return remoteTasks(tasks);
};

/** The claimed tasks of `tasks` that a remote worker holds. */
export function remoteTasks(tasks: Task[]) {
  return tasks.filter((t) => t.worker && (t.status === "CLAIMED" || t.status === "IN_PROGRESS"))
    .map((t) => ({
      task_id: t.id,
      session_id: t.session_id,
      worker: t.worker!,
      role: t.role,
      status: t.status,
      heartbeat_at: t.heartbeat_at,
    }));
}

const spendPart: StatusPart = async (app) => {
  const config = await loadConfig(app.paths.root);
  try {
    return spendSummary(await readSpend(app.paths, configuredBudgetUsd(config), false));
  } catch (e) {
    // A broken report must not hide the rest of the status, nor read as zero spend.
    if (!(e instanceof SpendFileError)) throw e;
    return { error: e.message, fix: e.fix };
  }
};

/** What `status` says of a run whose process is not running it, by its status now. */
const RUN_NOTES: Record<string, string> = {
  interrupted: "its process is gone: `service run` resumes it",
  failed: "failed: `service retry <task>` or `service cancel <task>`, then `service run`",
  completed: "completed",
  resumable: "tasks were retried or unblocked since it ended: `service run` resumes it",
};

/** A failed run none of whose tasks FAILED ended with work that waits to merge (said below it). */
const WAITS_TO_MERGE =
  "ended with work that waits to merge (why is below): `service run` resumes it";

function noteOf(status: string, state: RunState, failed: number): string {
  if (status === "failed" && failed === 0 && Object.keys(state.waiting ?? {}).length > 0) {
    return WAITS_TO_MERGE;
  }
  return status === "stopped" ? stoppedOutcome(state) : RUN_NOTES[status] ?? status;
}

/** The tasks of one run (the store's when the server opened it, else the specs on disk). */
async function runTasks(app: AppContext, runId: string): Promise<Task[]> {
  const opened = openedTaskStore(app);
  const tasks = opened ? (await opened).list() : (await loadTaskSpecs(app.paths)).tasks;
  return tasks.filter((t) => t.run_id === runId);
}

/** Counts by status of `tasks`, with their total. */
function countByStatus(tasks: Task[]): Record<string, number> {
  const counts: Record<string, number> = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  for (const t of tasks) counts[t.status]++;
  counts.total = tasks.length;
  return counts;
}

/** Each of `tasks` in `status`, with the reason it is there (its summary). */
function reasonsOf(
  tasks: Task[],
  status: Task["status"],
  none = "no reason given",
): Record<string, string> {
  return Object.fromEntries(
    tasks.filter((t) => t.status === status).map((t) => [t.id, t.summary ?? none]),
  );
}

/**
 * The current run: its state, its status now (recomputed from its journal as `service runs`
 * does, so a cancel or retry after it ended shows), its tasks counted by status, each of its
 * FAILED tasks with the reason it failed, each CANCELLED one with who cancelled it and, once
 * no process runs it, each ORPHANED one.
 */
const runPart: StatusPart = async (app: AppContext) => {
  const state = await readRunState(app.paths);
  if (!state) return null;
  const alive = state.status === "running" && processAlive(state.pid);
  const journal = journalPath(app.paths, state.run_id);
  const outcome = alive ? undefined : await exists(journal) ? await runOutcome(journal) : null;
  // A run recorded as begun whose journal is gone is described as such, never as resumable.
  const damage = outcome === null ? MISSING_JOURNAL : outcome?.damage;
  const status = alive
    ? "running"
    : damage
    ? "unverified"
    : outcome
    ? runStatusOf(outcome, false)
    : state.status;
  const tasks = await runTasks(app, state.run_id);
  return {
    ...state,
    status,
    ...(damage ? { journal_damage: damage } : {}),
    tasks: countByStatus(tasks),
    // A run whose journal does not verify never goes on: what it last waited for is moot.
    waiting: damage ? {} : stillWaiting(state.waiting ?? {}, tasks),
    failed: reasonsOf(tasks, "FAILED"),
    // Who cancelled each: an operator, a pull request closed by hand, its ticket closed.
    cancelled: reasonsOf(tasks, "CANCELLED", "cancelled by an operator"),
    // Ended while their agents worked (a stop, a crash): named, as the run's last lines named them.
    orphaned: alive ? {} : reasonsOf(tasks, "ORPHANED"),
    alive,
    ...(alive
      ? {}
      : damage
      ? damagedNote(damage, tasks, state.plan ? relative(app.paths.root, state.plan) : undefined)
      : { note: noteOf(status, state, tasks.filter((t) => t.status === "FAILED").length) }),
  };
};

/** What `status` says of a run whose journal does not verify, and the fix (lib/runs/journal_damage.ts). */
function damagedNote(damage: JournalDamage, tasks: readonly Task[], plan?: string) {
  const unfinished = tasks.filter((t) => !isFinished(t)).map((t) => t.id);
  return {
    note: `its journal does not verify: ${damage.words}`,
    fix: damageFix(unfinished, plan),
  };
}

/**
 * The waits of the run state whose task has not ended since: the state is written at the run's
 * ticks, so a run killed between a landing and its next tick leaves that task's last wait behind.
 */
export function stillWaiting(
  waiting: Record<string, string>,
  tasks: readonly Task[],
): Record<string, string> {
  const ended = new Set(
    tasks.filter((t) => ["CLOSED", "CANCELLED", "FAILED"].includes(t.status)).map((t) => t.id),
  );
  return Object.fromEntries(Object.entries(waiting).filter(([id]) => !ended.has(id)));
}

async function exists(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

const rateLimitsPart: StatusPart = async (app: AppContext) => {
  const nowS = Date.now() / 1000;
  const tracker = await loadCooldowns(app.paths.rateLimits);
  const file = tracker.toJSON(nowS);
  return {
    cooldowns: Object.entries(file.cooldowns).map(([adapter, e]) => ({
      adapter,
      remaining_s: Math.ceil(e.until - nowS),
      until: new Date(e.until * 1000).toISOString(),
      reset_named: e.named === true,
      ...(e.rule ? { rule: e.rule } : {}),
    })),
  };
};

/** The batch lane's requests in flight (DESIGN.md §15), oldest first, with their age. */
const batchesPart: StatusPart = async (app: AppContext) => {
  const nowS = Math.floor(Date.now() / 1000);
  let entries;
  try {
    entries = inFlight(await loadBatchLedger(app.paths.batches, true));
  } catch (e) {
    return { error: (e as Error).message, in_flight: [] };
  }
  return {
    in_flight: entries.sort((a, b) => a.submitted_at - b.submitted_at).map((e) => ({
      task_id: e.task_id,
      provider: e.provider,
      batch_id: e.batch_id!,
      model: e.model,
      submitted_at: new Date(e.submitted_at * 1000).toISOString(),
      age_s: Math.max(0, nowS - e.submitted_at),
    })),
  };
};

/** The connection gate's counters (docs/security.md): null when no server is listening. */
const connectionsPart: StatusPart = (app: AppContext) =>
  Promise.resolve(app.connections?.() ?? null);

/** Why the last `service run` did not start (a ContainerError before `run_started`), or null. */
const startFailurePart: StatusPart = (app: AppContext) => readStartFailure(app.paths.runtime);

/**
 * The remote workers heard from (`service workers`): each one's state now, slots, start
 * failures, and why it is cordoned or what it cannot start.
 */
const workerPoolPart: StatusPart = async (app: AppContext) => {
  const timeout = (await loadConfig(app.paths.root))?.heartbeat_timeout_s ?? 45;
  return (await registryFor(app.paths.root)).list().map((r) => {
    const v = workerView(r, Date.now(), timeout);
    return {
      name: v.name,
      state: v.state,
      slots: v.slots,
      free: v.free,
      heartbeat_age_s: v.heartbeat_age_s,
      failures: v.failures_total,
      ...(v.last_failure ? { last_failure: v.last_failure } : {}),
      ...(v.cordoned ? { cordoned: v.cordoned } : {}),
      ...(v.draining ? { draining: v.draining } : {}),
      cannot_start: [
        ...(v.adapters ?? []).filter((a) => !a.ready).map((a) => ({
          adapter: a.name,
          problem: a.problem ?? "not ready",
        })),
      ],
    };
  });
};

/** The parts of the status object, in order (DESIGN.md §6). */
export const STATUS_PARTS: ReadonlyArray<readonly [string, StatusPart]> = [
  ["tasks", taskCounts],
  ["verification_nudge", verificationNudgePart],
  ["verification_advice", verificationAdvicePart],
  ["agents", agentsPart],
  ["workers", workersPart],
  ["worker_pool", workerPoolPart],
  ["spend", spendPart],
  ["run", runPart],
  ["guarded", guardedPart],
  ["ticket_moves", ticketMovesPart],
  ["tracker_write_back", trackerWriteBackPart],
  ["git_setup", gitSetupPart],
  ["outside_commits", outsideCommitsPart],
  ["start_failure", startFailurePart],
  ["rate_limits", rateLimitsPart],
  ["batches", batchesPart],
  ["connections", connectionsPart],
];
