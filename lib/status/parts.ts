/**
 * The status parts of this service (DESIGN.md §6): `tasks` (counts by status),
 * `verification_nudge` (spec §2.10, from the ledger at request time), `agents` (live agents
 * from PID files), `spend` (cost report against budget), `rate_limits` (cooldowns).
 * `STATUS_PARTS` lists them in the order the status object shows them.
 */
import { loadCooldowns } from "../agents/cooldown.ts";
import { readRunState, type RunState, stoppedOutcome } from "../orchestrator/run_state.ts";
import { processAlive } from "../util/process_alive.ts";
import { readPidFiles } from "../agents/pid_files.ts";
import { loadConfig } from "../config/load.ts";
import { configuredBudgetUsd, readSpend, SpendFileError, spendSummary } from "../cost/spend.ts";
import type { AppContext } from "../http/context.ts";
import { loadTaskSpecs } from "../tasks/persist.ts";
import { openedTaskStore } from "../tasks/registry.ts";
import { STATUSES } from "../tasks/lifecycle.ts";
import { readVerificationNudge } from "../verification/nudge.ts";
import type { StatusPart } from "./status.ts";

/** Task counts by status: the store's when the server opened it, else from the specs on disk. */
async function taskCounts(app: AppContext): Promise<Record<string, number>> {
  const store = openedTaskStore(app);
  if (store) return (await store).counts();
  const counts: Record<string, number> = Object.fromEntries(STATUSES.map((s) => [s, 0]));
  const { tasks } = await loadTaskSpecs(app.paths);
  for (const t of tasks) counts[t.status]++;
  counts.total = tasks.length;
  return counts;
}

const verificationNudgePart: StatusPart = async (app) => {
  const config = await loadConfig(app.paths.root);
  return await readVerificationNudge(
    app.paths,
    config?.verification_nudge ?? { threshold: 0.3, min_completions: 3 },
  );
};

const agentsPart: StatusPart = async (app) => {
  const agents = await readPidFiles(app.paths);
  return agents.filter((a) => a.alive).map(({ file: _f, problem: _p, ...rest }) => rest);
};

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

/** What `status` says of a run whose process is not running it, by the run state's status. */
const RUN_NOTES: Record<string, string> = {
  running: "its process is gone: `service run` resumes it",
  failed: "failed: `service retry <task>` or `service cancel <task>`, then `service run`",
  completed: "completed",
};

function noteOf(state: RunState): string {
  return state.status === "stopped" ? stoppedOutcome(state) : RUN_NOTES[state.status];
}

/** Every FAILED task with the reason it failed (the store's summary). */
async function failedReasons(app: AppContext): Promise<Record<string, string>> {
  const opened = openedTaskStore(app);
  const tasks = opened ? (await opened).list() : (await loadTaskSpecs(app.paths)).tasks;
  return Object.fromEntries(
    tasks.filter((t) => t.status === "FAILED").map((t) => [t.id, t.summary ?? "no reason given"]),
  );
}

const runPart: StatusPart = async (app: AppContext) => {
  const state = await readRunState(app.paths);
  if (!state) return null;
  const alive = state.status === "running" && processAlive(state.pid);
  return {
    ...state,
    waiting: state.waiting ?? {},
    failed: await failedReasons(app),
    alive,
    ...(alive ? {} : { note: noteOf(state) }),
  };
};

const rateLimitsPart: StatusPart = async (app: AppContext) => {
  const nowS = Date.now() / 1000;
  const tracker = await loadCooldowns(app.paths.rateLimits);
  const file = tracker.toJSON(nowS);
  return {
    cooldowns: Object.entries(file.cooldowns).map(([adapter, e]) => ({
      adapter,
      remaining_s: Math.ceil(e.until - nowS),
      until: new Date(e.until * 1000).toISOString(),
      ...(e.rule ? { rule: e.rule } : {}),
    })),
  };
};

/** The connection gate's counters (docs/security.md): null when no server is listening. */
const connectionsPart: StatusPart = (app: AppContext) =>
  Promise.resolve(app.connections?.() ?? null);

/** The parts of the status object, in order (DESIGN.md §6). */
export const STATUS_PARTS: ReadonlyArray<readonly [string, StatusPart]> = [
  ["tasks", taskCounts],
  ["verification_nudge", verificationNudgePart],
  ["agents", agentsPart],
  ["spend", spendPart],
  ["run", runPart],
  ["rate_limits", rateLimitsPart],
  ["connections", connectionsPart],
];
