/**
 * Drive a started run: publish the run state (`.sdd/runtime/orchestrator.json`, with why tasks
 * wait as it changes), run the {@link Orchestrator} with the progress display until the run ends,
 * then journal `run_completed` and record how it ended and what is left.
 */
import { verificationAdvice } from "../verification/advice.ts";
import { CooldownTracker, loadCooldowns } from "../agents/cooldown.ts";
import * as ev from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { type RunState, writeRunState } from "../runs/run_state.ts";
import { LatestWrite } from "../async/latest_write.ts";
import type { TaskStore } from "../tasks/store.ts";
import { isFinished } from "../tasks/task.ts";
import { unownedTaskIds } from "../trackers/service_run.ts";
import type { VerificationNudge } from "../verification/nudge_types.ts";
import { journalPath, type WorkspacePaths } from "../workspace.ts";
import {
  Orchestrator,
  type OrchestratorOptions,
  type RunOutcome,
} from "../orchestrator/orchestrator.ts";
import { ProgressDisplay } from "./progress.ts";
import type { OrchestratorSettings } from "../orchestrator/settings.ts";

/** The run `runPlan` drives: its id, tasks and plan. */
export interface StartedRun {
  runId: string;
  taskIds: string[];
  planFile: string;
  planSha?: string;
  continuous: boolean;
  /**
   * The task store's claim mark when this process opened it: tasks claimed since are a live
   * claimant's, not left by an earlier process (see `OrchestratorOptions.claimsBefore`).
   */
  claimsBefore?: number;
}

/** What {@link drive} needs besides the run. */
export interface DriveOptions {
  paths: WorkspacePaths;
  store: TaskStore;
  settings: OrchestratorSettings;
  adapter: OrchestratorOptions["adapter"];
  launch: OrchestratorOptions["launch"];
  /** Container isolation, as probed before `run_started` (absent: host processes). */
  isolation?: OrchestratorOptions["isolation"];
  fallbacks?: OrchestratorOptions["fallbacks"];
  resolveAdapter?: OrchestratorOptions["resolveAdapter"];
  chains?: OrchestratorOptions["chains"];
  batchEndpoint?: OrchestratorOptions["batchEndpoint"];
  mcpConfigPath?: string;
  cost: OrchestratorOptions["cost"];
  targetBranch: string;
  /** Landing through pull requests (lib/landing/setup.ts), when configured. */
  landing?: OrchestratorOptions["landing"];
  /** Kubernetes Jobs as workers (lib/kubernetes/mod.ts), when configured. */
  kubernetes?: OrchestratorOptions["kubernetes"];
  serverUrl: string;
  out: (line: string) => void;
  /** The terminal's line for the verification alert, with what it advises (see `RunPlanOptions`). */
  alertLine?: (nudge: VerificationNudge, advice: string) => string | undefined;
  /** Interval of the loop's tick (see `RunPlanOptions`). */
  tickMs?: number;
  signal?: AbortSignal;
  /** Stops it without the agents' grace (see `RunPlanOptions`). */
  stopNow?: AbortSignal;
  /** Told the loop once it exists (the caller's stop signal reaches it). */
  started: (orchestrator: Orchestrator) => void;
  /**
   * Told how to write a time-stamped event line while the run's progress is shown, and told
   * `undefined` when it is no longer (the task server's lines, such as a task ORPHANED by the
   * heartbeat monitor, then read like every other line of the run).
   */
  events?: (write: ((line: string) => void) | undefined) => void;
}

/** How a driven run ended. */
export interface DrivenRun extends RunOutcome {
  /** Tasks of the run left unfinished (a stopped run resumes only while some are). */
  unfinished: number;
}

/** How often at most the run state is rewritten with why tasks wait. */
const WAITS_INTERVAL_MS = 1_000;

/** Publish the run state, drive the run's tasks to the end, and record how it ended. */
export async function drive(run: StartedRun, o: DriveOptions): Promise<DrivenRun> {
  const { paths, store, out } = o;
  const state: RunState = {
    run_id: run.runId,
    pid: Deno.pid,
    plan: run.planFile,
    plan_sha256: run.planSha,
    url: o.serverUrl,
    started_at: Math.floor(Date.now() / 1000),
    status: "running",
  };
  await writeRunState(paths, state);
  const progress = new ProgressDisplay(out, run.runId);
  // Why tasks wait can change with every decision (twice a task): for `status`, the latest is
  // written at most once a second, one write at a time; the run's end writes the last word.
  const waits = new LatestWrite<Record<string, string>>(
    (waiting) =>
      writeRunState(paths, { ...state, waiting }).catch((e) =>
        progress.event(`cannot publish waiting reasons: ${(e as Error).message}`)
      ),
    WAITS_INTERVAL_MS,
  );
  const { rateLimitCooldownS, ...settings } = o.settings;
  const orchestrator = new Orchestrator({
    ...settings,
    paths,
    runId: run.runId,
    journalPath: journalPath(paths, run.runId),
    store,
    taskIds: run.taskIds,
    planFile: run.planFile,
    ...(run.claimsBefore === undefined ? {} : { claimsBefore: run.claimsBefore }),
    adapter: o.adapter,
    launch: o.launch,
    isolation: o.isolation,
    fallbacks: o.fallbacks,
    resolveAdapter: o.resolveAdapter,
    chains: o.chains,
    batchEndpoint: o.batchEndpoint,
    serverUrl: o.serverUrl,
    targetBranch: o.targetBranch,
    ...(o.landing ? { landing: o.landing } : {}),
    ...(o.kubernetes ? { kubernetes: o.kubernetes } : {}),
    mcpConfigPath: o.mcpConfigPath,
    onAlert: (nudge) => {
      const line = o.alertLine?.(
        nudge,
        verificationAdvice(nudge.recent_unverified, {
          roleOf: (id) => store.get(id)?.role,
          gatesOf: (role) => o.settings.qualityGates({ role }).length,
        }),
      );
      if (line) progress.notice(line);
    },
    cooldowns: await cooldownTracker(paths.rateLimits, rateLimitCooldownS),
    cost: o.cost,
    continuous: run.continuous,
    tickMs: o.tickMs,
    log: (line) => progress.event(line),
    onWaiting: (waiting) => waits.set(waiting),
  });
  o.started(orchestrator);
  o.events?.((line) => progress.event(line));
  if (o.signal?.aborted) orchestrator.stop();
  if (o.stopNow?.aborted) orchestrator.stop({ now: true });
  progress.start(() => ({
    store,
    runtimeDir: paths.runtime,
    taskIds: run.continuous ? orchestrator.taskIds() : run.taskIds,
    orchestrator,
  }));
  const running = orchestrator.run();
  // Tracker hook: tasks the trackers created before the loop subscribed join a continuous run.
  if (run.continuous) orchestrator.adopt(unownedTaskIds(store));
  const outcome = await running.finally(() => o.events?.(undefined));
  progress.stop();
  if (outcome.status !== "completed") {
    // Say what is left and why, so the last lines on the terminal are the way forward.
    for (const [id, why] of Object.entries(orchestrator.waitingReasons())) out(`${id}: ${why}`);
  }
  await waits.stop(); // the last word on the run state is below
  await appendEvents(journalPath(paths, run.runId), [
    ev.runCompleted({ run_id: run.runId, status: outcome.status, counts: outcome.counts }),
  ]);
  const unfinished = store.list().filter((t) => t.run_id === run.runId && !isFinished(t));
  await writeRunState(paths, {
    ...state,
    status: outcome.status,
    waiting: orchestrator.waitingReasons(),
    unfinished: unfinished.length,
  });
  // The caller prints the final status line, once (lib/cli/commands/run.ts).
  return { ...outcome, unfinished: unfinished.length };
}

/** The cooldowns of earlier runs, with the spec's 300 s, or `seconds` when set (tests, drills). */
async function cooldownTracker(path: string, seconds?: number): Promise<CooldownTracker> {
  const loaded = await loadCooldowns(path);
  return seconds ? CooldownTracker.fromJSON(loaded.toJSON(), seconds) : loaded;
}
