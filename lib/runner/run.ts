/**
 * `service run [plan]`, the shell around {@link decideRunStart}: read the facts (the run state,
 * the plan, the store's tasks, the steps earlier runs finished), check everything checkable
 * before a row is written, start the task server, then act on the decision — resume the run
 * with unfinished tasks (`run_resumed`), start a continuous run from the trackers, start a new
 * run with the plan's steps left to do (`run_started`), or say there is nothing to do — and
 * drive the run to its end (lib/runner/run_drive.ts).
 */
import { journaledTarget, refuseMovedTarget } from "./resume_target.ts";
import { journalBrokeWhileRunning, refuseUnverifiedJournal } from "./resume_journal.ts";
import { watchTargetBranch } from "./target_watch.ts";
import { refuseUnreadableSpecs } from "./unreadable_specs.ts";
import { teardownsDone } from "../container/reap.ts";
import { revokeRunCredentials } from "../auth/agent_credentials.ts";
import { markRunStarting } from "../metrics/run_probe.ts";
import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { reapPidFiles } from "../agents/pid_files.ts";
import { ValidationError } from "../config/errors.ts";
import { adapterChains, configuredAdapter, loadWorkspaceConfig } from "../config/load.ts";
import { batchEndpoint, batchProviderOf } from "../batch/mod.ts";
import { containerFallbacks, readyFallbacks, runLaunch } from "../agent_session/lane.ts";
import { adapterResolver, readyUsedAdapters, usedAdapters } from "./used_adapters.ts";
import type { ServerSettings } from "../config/server_config.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { configuredBudgetUsd, readCostReport } from "../cost/spend.ts";
import * as ev from "../journal/events.ts";
import { appendEvents, JournalPoisonedError } from "../journal/journal_file.ts";
import { isFinished } from "../tasks/task.ts";
import { mcpDelivery, runMcpServers, writeRunMcpConfig } from "../mcp/run_servers.ts";
import type { ParsedPlan } from "../plans/plan.ts";
import { readRunState, writeRunState } from "../runs/run_state.ts";
import { listenByPolicy, PortBusyError, portChoice } from "../server/port_policy.ts";
import { type RunningServer, type ServedApp, startServer } from "../server/serve.ts";
import { watchGitSetup } from "./git_setup_watch.ts";
import { gitSetupPath } from "../runs/git_setup.ts";
import type { TaskStore } from "../tasks/store.ts";
import { taskStoreFor } from "../tasks/registry.ts";
import { runsFromTrackers, startTrackerRun, TRACKER_RUN_PLAN } from "../trackers/service_run.ts";
import { processAlive } from "../util/process_alive.ts";
import type { VerificationNudge } from "../verification/nudge_types.ts";
import { journalPath, type WorkspacePaths, workspacePaths } from "../workspace.ts";
import { ensureServiceExcluded } from "../worktrees/exclude.ts";
import { fileDigest, startNewRun, upToDateLine } from "./new_run.ts";
import type { RunOutcome } from "../orchestrator/orchestrator.ts";
import { doneSteps, keyedTasks, stepsToDo } from "./plan_steps.ts";
import { checkedPlan, currentBranch, RunError, throwSetupProblems } from "./run_checks.ts";
import { warnIgnoredInstalls } from "./ignored_installs.ts";
import { repairAfterCrash } from "./crash_repair.ts";
import { prepareLanding } from "../landing/mod.ts";
import { prepareKubernetes } from "../kubernetes/mod.ts";
import { drive, type StartedRun } from "./run_drive.ts";
import {
  decideRunStart,
  describeUnfinished,
  type RunStart,
  type RunStartFacts,
} from "./run_start.ts";
import { orchestratorSettings } from "../orchestrator/settings.ts";
import { ContainerError } from "../container/errors.ts";
import { clearStartFailure, recordStartFailure } from "../runs/start_failure.ts";
import type { Orchestrator } from "../orchestrator/orchestrator.ts";

/** Options of {@link runPlan}. */
export interface RunPlanOptions {
  root: string;
  /** Plan file. Without it an unfinished run resumes, else `plan.yaml` starts. */
  plan?: string;
  /** Run every step, also those an earlier run landed. */
  force?: boolean;
  /**
   * Port of the embedded task server, chosen with `--port` (default: SERVICE_PORT / config /
   * 8052). A busy chosen port is an error; only the default falls back (lib/server/port_policy.ts).
   */
  port?: number;
  /** Serve on this already-started server instead (the caller owns it and keeps it afterwards). */
  server?: RunningServer;
  out?: (line: string) => void;
  /** Stops the run (SIGINT/SIGTERM in the CLI). */
  signal?: AbortSignal;
  /**
   * Stops it without waiting out the agents' grace (a second Ctrl-C): those still ending get
   * SIGKILL at once; their work is kept all the same.
   */
  stopNow?: AbortSignal;
  /** The task server's HTTP app, built at the edge (routes/_app.ts `SERVER_APP`). */
  app: ServedApp;
  /**
   * The terminal's line when the verification alert first trips (the CLI hands in its coloured
   * status line); without it the alert is left to `service status` and the board.
   */
  /** The alert's line for `nudge`, with what it advises (lib/verification/advice.ts). */
  alertLine?: (nudge: VerificationNudge, advice: string) => string | undefined;
  /** Interval of the loop's tick, for timeouts (default 1 s; tests stretch it). */
  tickMs?: number;
  /**
   * The environment the run reads — its `SERVICE_*` settings, credentials, container runtime,
   * kubeconfig, and what its agents are allowed to inherit (default: this process's, read once
   * at the start). An embedding caller passes its own instead of changing the process's, which
   * every thread of the process shares.
   */
  env?: Readonly<Record<string, string>>;
}

/** The result of a run. */
export interface RunResult extends RunOutcome {
  runId: string;
  url: string;
  /** Every step of the plan had landed already: no run was started. */
  upToDate?: boolean;
  /** Tasks of the run left unfinished (a stopped run resumes only while some are). */
  unfinished?: number;
}

/** End agents left running by an orchestrator that died, and remove their stale PID files. */
async function reapStaleAgents(paths: WorkspacePaths, out: (line: string) => void): Promise<void> {
  await reapPidFiles(
    paths,
    5000,
    (a) => out(`stale agent ${a.session_id} (pid ${a.pid}) still running: SIGTERM, then SIGKILL`),
  );
}

/** A refusal of {@link decideRunStart} as the error the CLI prints. */
function refused(start: Extract<RunStart, { kind: "refuse" }>): never {
  throw new RunError(start.message, 1, start.fix);
}

/** Run a plan to the end, or resume the unfinished run. */
export async function runPlan(options: RunPlanOptions): Promise<RunResult> {
  const prep = await prepareRun(options);
  const { root, paths, out } = prep;
  // The server's own lines (a task ORPHANED by the heartbeat monitor) are time-stamped like the
  // run's while its progress is shown.
  let serverLine = out;
  const server = options.server ??
    await startRunServer(
      root,
      options.port,
      prep.serverSettings,
      (l) => serverLine(l),
      options.app,
    );
  // `/readyz` says starting until the run's journal is open and its loop runs.
  const unmarkStarting = markRunStarting(root);
  const stopOnSignal = () => orchestrator?.stop();
  const stopNowOnSignal = () => orchestrator?.stop({ now: true });
  let orchestrator: Orchestrator | undefined;
  let begun: string | undefined;
  let gitSetupChanges: (() => Promise<string[]>) | undefined;
  let outsideCommits: (() => Promise<string[]>) | undefined;
  options.signal?.addEventListener("abort", stopOnSignal, { once: true });
  options.stopNow?.addEventListener("abort", stopNowOnSignal, { once: true });
  try {
    const store = await taskStoreFor(server.ctx);
    refuseUnreadableSpecs(store.unreadableSpecs);
    // Claims made from here on (a worker's, through the task API) are live, whatever recovery
    // finds of the run when its loop starts.
    const claimsBefore = store.claimMark();
    // A landing a kill or a full disk cut short is put right (and said) before anything is decided.
    for (const line of await repairAfterCrash(paths, store, prep.targetBranch)) out(line);
    const { start, newPlan } = await decideStart(prep, store, options.force);
    if (start.kind === "resume") {
      const started = await journaledTarget(journalPath(paths, start.runId));
      refuseMovedTarget({ runId: start.runId, started, targetBranch: prep.targetBranch });
      await refuseUnverifiedJournal({
        root,
        runId: start.runId,
        journal: journalPath(paths, start.runId),
        unfinished: start.unfinished.map((t) => t.id),
        planFile: start.planFile || undefined,
      });
    }
    if (start.kind === "up_to_date") {
      out(upToDateLine(relative(root, start.planFile), start.steps.done));
      return {
        status: "completed",
        problems: [],
        counts: {},
        runId: prep.previous?.run_id ?? "",
        url: server.url,
        upToDate: true,
      };
    }
    const { landing } = prep;
    const run = await begin(start, {
      paths,
      store,
      configSha: prep.digest,
      adapter: prep.adapter.name,
      targetBranch: prep.targetBranch,
      ...(landing
        ? {
          landingOn: `${landing.settings.base} of ${landing.settings.repo} through ` +
            `${landing.settings.provider === "github" ? "pull" : "merge"} requests`,
        }
        : {}),
      out,
      planName: newPlan?.name,
      planSha: prep.facts.plan?.sha256,
    });
    begun = run.runId;
    gitSetupChanges = await watchGitSetup(root, gitSetupPath(paths, run.runId));
    // Merge mode: every commit the run makes on the branch is a journaled merge (pull requests
    // land on the host instead).
    if (!landing) {
      outsideCommits = await watchTargetBranch({
        paths,
        branch: prep.targetBranch,
        runId: run.runId,
      });
    }
    out(
      `review board${options.server ? "" : " (live while the run lasts)"}: ${server.url}` +
        `/dashboard/review-board?run=${run.runId}`,
    );
    const driven = await driveRun(prep, { ...run, claimsBefore }, {
      store,
      server,
      options,
      started: (o) => orchestrator = o,
      events: (write) => serverLine = write ?? out,
    }).catch((e) =>
      e instanceof JournalPoisonedError
        ? journalBroke(prep, store, run.runId, e)
        : Promise.reject(e)
    );
    return { ...driven, runId: run.runId, url: server.url };
  } finally {
    unmarkStarting();
    options.signal?.removeEventListener("abort", stopOnSignal);
    options.stopNow?.removeEventListener("abort", stopNowOnSignal);
    for (const line of await gitSetupChanges?.() ?? []) out(line);
    for (const line of await outsideCommits?.() ?? []) out(line);
    // Its agents' credentials end with the loop (a resumed run mints new ones), but those of
    // sessions still held by remote workers: they go on after a stop and report to the next
    // `service run` (DESIGN.md §16).
    if (begun) revokeRunCredentials(paths.root, begun, await workerHeldSessions(server));
    if (!options.server) await server.shutdown();
    await teardownsDone(); // no container of the run is listed after it
  }
}

/**
 * The run's journal stopped verifying while it ran: its state says it is over (this process may
 * live on: `service serve`, an embedding caller), and the error says why and the way out.
 */
async function journalBroke(
  prep: PreparedRun,
  store: TaskStore,
  runId: string,
  error: JournalPoisonedError,
): Promise<never> {
  const state = await readRunState(prep.paths);
  if (state?.run_id === runId) {
    await writeRunState(prep.paths, { ...state, status: "failed", waiting: {} }).catch(() => {});
  }
  throw journalBrokeWhileRunning({
    root: prep.root,
    runId,
    error,
    unfinished: store.list().filter((t) => t.run_id === runId && !isFinished(t)).map((t) => t.id),
    planFile: prep.facts.plan?.file,
  });
}

/** Sessions remote workers still hold (claimed, or reported with their own report to come). */
async function workerHeldSessions(server: RunningServer): Promise<Set<string>> {
  return new Set(
    (await taskStoreFor(server.ctx)).list().flatMap((t) =>
      t.worker && t.session_id && ["CLAIMED", "IN_PROGRESS", "DONE"].includes(t.status)
        ? [t.session_id]
        : []
    ),
  );
}

/** What {@link prepareRun} checked and read before the task server starts. */
interface PreparedRun {
  root: string;
  paths: WorkspacePaths;
  out: (line: string) => void;
  config: ServiceConfig;
  serverSettings: ServerSettings;
  /** `sha256:` digest of the service.yaml read. */
  digest: string;
  adapter: ReturnType<typeof configuredAdapter>;
  previous: Awaited<ReturnType<typeof readRunState>>;
  facts: RunStartFacts;
  /** The plan given on the command line, checked. */
  plan: ParsedPlan | undefined;
  env: Record<string, string>;
  mcp: Awaited<ReturnType<typeof runMcpServers>>;
  checked: Awaited<ReturnType<typeof runLaunch>>;
  fallbacks: ReturnType<typeof containerFallbacks>;
  chains: Record<string, string[]>;
  endpoint: ReturnType<typeof batchEndpoint> | undefined;
  landing: Awaited<ReturnType<typeof prepareLanding>>;
  /** Kubernetes Jobs as workers (DESIGN.md §17), when configured: the cluster answered. */
  kubernetes: Awaited<ReturnType<typeof prepareKubernetes>>;
  targetBranch: string;
}

/**
 * Everything checkable, checked before the task server starts and before a row is written: the
 * configuration, another run in progress, the plan, templates, settings, MCP servers, where
 * agents run, fallbacks, the batch lane and landing.
 */
async function prepareRun(options: RunPlanOptions): Promise<PreparedRun> {
  const root = resolve(options.root);
  const out = options.out ?? ((line: string) => console.log(line));
  const paths = workspacePaths(root);
  const env = { ...(options.env ?? Deno.env.toObject()) };
  // One read: the configuration, the server's settings (a bad port fails before any work) and
  // the digest `run_started` records all come from the same bytes.
  const { config, server: serverSettings, digest } = await loadWorkspaceConfig(root, env);
  if (!config) {
    throw new ValidationError({
      file: join(root, "service.yaml"),
      path: "",
      position: { line: 1, col: 1 },
      problem: "no service.yaml in the workspace",
      fix: "create one, for example:\n    cli: claude\n    roles:\n      backend: {}",
    });
  }
  const adapter = configuredAdapter(config);
  const workspaceBranch = await currentBranch(root);
  await ensureServiceExcluded(root);

  const previous = await readRunState(paths);
  const defaultPlan = join(root, "plan.yaml");
  const facts: RunStartFacts = {
    root,
    pid: Deno.pid,
    previous,
    previousAlive: previous !== undefined && processAlive(previous.pid),
    planArg: options.plan,
    defaultPlan: { file: defaultPlan, exists: existsSync(defaultPlan) },
    trackers: runsFromTrackers(config),
  };
  const start = decideRunStart(facts); // another run in progress is refused before any check
  if (start.kind === "refuse") refused(start);
  const planFile = options.plan === undefined ? undefined : resolve(root, options.plan);
  // Everything checkable is checked before a row is written: the plan, templates, settings, CLI.
  const plan = planFile ? await checkedPlan(root, planFile, config) : undefined;
  if (planFile) facts.plan = { file: planFile, sha256: await fileDigest(planFile) };
  else await throwSetupProblems(root, config, Object.keys(config.roles));
  const roles = plan?.tasks.map((t) => t.role) ?? Object.keys(config.roles);
  await warnIgnoredInstalls(root, config, { roles, out });
  // MCP servers (issue 13): an unset ${VAR} fails here, before a row is written.
  const mcp = await runMcpServers(config, (n) => env[n]);
  const mcpNote = mcpDelivery(adapter, mcp);
  if (mcpNote) out(adapter.acceptsMcpConfig ? mcpNote : `warning: ${mcpNote}`);
  const checked = await checkedLaunch(config, adapter, { root, paths, env, out });
  const { fallbacks, chains } = await readyChains(config, adapter, {
    checked,
    env,
    root,
    out,
    tasks: plan?.tasks ?? [],
  });
  const endpoint = batchLane(config, adapter, { plan, env, out });
  // Pull requests (DESIGN.md §12): the token and its permissions are checked and the base is
  // fetched before a row is written; work is then cut from and gated against the fetched base.
  const landing = await prepareLanding(config, {
    root,
    workspaceBranch,
    env: (name) => env[name],
  });
  const targetBranch = landing?.settings.trackingRef ?? workspaceBranch;
  // Kubernetes Jobs (DESIGN.md §17): the cluster answers and lets us list Jobs, before any row.
  const kubernetes = await prepareKubernetes(config, { root, env, out });
  return {
    root,
    paths,
    out,
    config,
    serverSettings,
    digest,
    adapter,
    previous,
    facts,
    plan,
    env,
    mcp,
    checked,
    fallbacks,
    chains,
    endpoint,
    landing,
    kubernetes,
    targetBranch,
  };
}

/** Where agents run: host processes, or containers whose probe passed (never a fallback). */
async function checkedLaunch(
  config: ServiceConfig,
  adapter: PreparedRun["adapter"],
  o: { root: string; paths: WorkspacePaths; env: Record<string, string>; out: PreparedRun["out"] },
): Promise<PreparedRun["checked"]> {
  const { root, paths, env, out } = o;
  // With `max_agents: 0` every agent runs on a worker: the CLI and its key are the workers'.
  const ownAgents = config.max_agents !== 0;
  if (!ownAgents) {
    out(
      "max_agents: 0: every task runs on a remote worker; each worker checks its agent CLI and " +
        "provider key when it registers",
    );
  }
  const checked = await runLaunch(config, adapter, {
    root,
    runtimeDir: paths.runtime,
    env,
    out,
    ownAgents,
  })
    .catch(async (e) => {
      // No run will carry the reason: `status` shows it until a run's checks pass.
      if (e instanceof ContainerError) {
        await recordStartFailure(paths.runtime, {
          error: e.name,
          kind: e.kind,
          message: e.message,
          fix: e.fix,
          at: new Date().toISOString(),
        }).catch(() => {});
      }
      throw e;
    });
  await clearStartFailure(paths.runtime);
  return checked;
}

/**
 * Fallbacks that cannot start are left out of every chain, with the reason (never fatal). The
 * image holds the configured adapter's CLI only: in containers there are no fallbacks.
 */
async function readyChains(
  config: ServiceConfig,
  adapter: PreparedRun["adapter"],
  o: {
    checked: PreparedRun["checked"];
    env: Record<string, string>;
    root: string;
    out: PreparedRun["out"];
    /** The plan's tasks: the adapters their steps name (`cli`) are checked too. */
    tasks: readonly { id: string; cli?: string }[];
  },
): Promise<Pick<PreparedRun, "fallbacks" | "chains">> {
  const { checked, env, root, out } = o;
  // Every adapter the roles and the steps name must start, like the configured one (fatal).
  const used = await readyUsedAdapters(config, usedAdapters(config, o.tasks), {
    env,
    root,
    isolation: !!checked.isolation,
  });
  const fallbacks = [
    ...used,
    ...(checked.isolation
      ? containerFallbacks(config, (m) => out(`warning: ${m}`))
      : (await readyFallbacks(config, {
        env,
        root,
        warn: (m) => out(`warning: ${m}`),
        ownAgents: config.max_agents !== 0,
      }))
        .filter((f) => !used.some((u) => u.adapter.name === f.adapter.name))),
  ];
  const ready = new Set([adapter.name, ...fallbacks.map((f) => f.adapter.name)]);
  const chains = Object.fromEntries(
    Object.entries(adapterChains(config)).map(([role, chain]) => [
      role,
      chain.filter((a) => ready.has(a)),
    ]),
  );
  return { fallbacks, chains };
}

/** The batch endpoint of the adapter's provider; says why batch_eligible tasks run in real time. */
function batchLane(
  config: ServiceConfig,
  adapter: PreparedRun["adapter"],
  o: { plan: ParsedPlan | undefined; env: Record<string, string>; out: PreparedRun["out"] },
): PreparedRun["endpoint"] {
  const { plan, env, out } = o;
  const provider = batchProviderOf(adapter.name);
  const endpoint = provider && batchEndpoint(provider, env, config.batch.api_url);
  const batchable = Object.keys(config.roles).length > 0 && (config.batch_eligible ||
    (plan?.tasks ?? []).some((t) => t.batch_eligible));
  if (batchable && !provider) {
    out(
      `warning: batch_eligible tasks run in real time: ${adapter.name} has no batch API ` +
        "(the batch lane serves claude and codex)",
    );
  } else if (batchable && endpoint && "problem" in endpoint) {
    out(`warning: batch_eligible tasks run in real time: ${endpoint.problem} (${endpoint.fix})`);
  }
  return endpoint || undefined;
}

/** The run decision once the store's tasks and the steps earlier runs finished are known. */
async function decideStart(
  prep: PreparedRun,
  store: TaskStore,
  force: boolean | undefined,
): Promise<{ start: Exclude<RunStart, { kind: "refuse" | "needs" }>; newPlan?: ParsedPlan }> {
  const { facts, paths, root, config, plan } = prep;
  facts.tasks = store.list();
  let start = decideRunStart(facts);
  let newPlan: ParsedPlan | undefined;
  if (start.kind === "needs" && start.fact === "steps") {
    newPlan = plan ?? await checkedPlan(root, start.planFile, config);
    const earlier = force ? new Map() : await doneSteps(paths, prep.targetBranch, prep.out);
    facts.steps = stepsToDo(keyedTasks(newPlan), earlier);
    start = decideRunStart(facts);
  }
  if (start.kind === "refuse" && start.resumable) {
    // It cannot be offered for a resume if its journal does not verify: that refusal's words win.
    await refuseUnverifiedJournal({
      root,
      runId: start.resumable.runId,
      journal: journalPath(paths, start.resumable.runId),
      unfinished: start.resumable.unfinished,
      planFile: facts.plan?.file,
    });
  }
  if (start.kind === "refuse") refused(start);
  if (start.kind === "needs") throw new Error(`decideRunStart() still needs ${start.fact}`);
  return { start, newPlan };
}

/** Drive the begun run to its end with the settings and lanes {@link prepareRun} checked. */
async function driveRun(
  prep: PreparedRun,
  run: StartedRun,
  o: {
    store: TaskStore;
    server: RunningServer;
    options: RunPlanOptions;
    started: (o: Orchestrator) => void;
    /** Told how to write a time-stamped line while the progress shows (see `drive`). */
    events: (write: ((line: string) => void) | undefined) => void;
  },
): Promise<RunOutcome> {
  const { paths, config, env, adapter, checked, endpoint, landing, out } = prep;
  const { store, server, options } = o;
  let taskHistory = "";
  try {
    taskHistory = await Deno.readTextFile(paths.taskMetrics);
  } catch { /* no history yet */ }
  const settings = orchestratorSettings({
    config,
    env,
    tokens: prep.serverSettings.tokens,
    taskHistory,
  });
  return await drive(run, {
    paths,
    store,
    settings,
    adapter,
    launch: checked.launch,
    isolation: checked.isolation,
    fallbacks: prep.fallbacks,
    resolveAdapter: adapterResolver(config, {
      env,
      root: prep.root,
      isolation: !!checked.isolation,
    }),
    chains: prep.chains,
    batchEndpoint: endpoint && !("problem" in endpoint) ? endpoint : undefined,
    mcpConfigPath: await writeRunMcpConfig(paths, run.runId, adapter, prep.mcp),
    cost: await readCostReport(paths, configuredBudgetUsd(config)),
    targetBranch: prep.targetBranch,
    ...(landing ? { landing } : {}),
    ...(prep.kubernetes ? { kubernetes: prep.kubernetes } : {}),
    serverUrl: server.url,
    out,
    alertLine: options.alertLine,
    tickMs: options.tickMs,
    signal: options.signal,
    stopNow: options.stopNow,
    started: o.started,
    events: o.events,
  });
}

/** What {@link begin} needs besides the decision. */
interface BeginOptions {
  paths: WorkspacePaths;
  store: TaskStore;
  /** `sha256:` digest of the service.yaml the run validated. */
  configSha: string;
  adapter: string;
  targetBranch: string;
  /** How the terminal names where work lands, when not `targetBranch` (pull requests). */
  landingOn?: string;
  out: (line: string) => void;
  /** The new run's plan `name:`. */
  planName?: string;
  /** The digest of the plan passed, when one was. */
  planSha?: string;
}

/** Carry out how the run starts: resume it, or start a tracker run or a new run of the plan. */
async function begin(
  start: Extract<RunStart, { kind: "resume" | "tracker_run" | "new_run" }>,
  o: BeginOptions,
): Promise<StartedRun> {
  const { paths, out } = o;
  switch (start.kind) {
    case "resume":
      await reapStaleAgents(paths, out);
      await appendEvents(journalPath(paths, start.runId), [
        ev.runResumed({ run_id: start.runId, pid: Deno.pid }),
      ]);
      out(
        `resuming run ${start.runId}: ${start.unfinished.length} unfinished task(s): ${
          describeUnfinished(start.unfinished)
        }`,
      );
      return {
        runId: start.runId,
        taskIds: start.taskIds,
        planFile: start.planFile,
        planSha: start.planSha256,
        continuous: start.continuous,
      };
    case "tracker_run":
      // Tracker hook (lib/trackers/service_run.ts): no plan, trackers configured → continuous.
      return {
        ...await startTrackerRun(o.store, o),
        planFile: TRACKER_RUN_PLAN,
        continuous: true,
      };
    case "new_run": {
      const planSha = o.planSha ?? await fileDigest(start.planFile);
      return {
        ...await startNewRun(o.store, { ...o, start, planSha }),
        planFile: start.planFile,
        planSha,
        continuous: false,
      };
    }
  }
}

/** The run's task server (and board) on the chosen port, by the one busy-port policy. */
async function startRunServer(
  root: string,
  flagPort: number | undefined,
  settings: ServerSettings,
  out: (line: string) => void,
  app: ServedApp,
): Promise<RunningServer> {
  const choice = portChoice(flagPort === undefined ? undefined : String(flagPort), settings);
  try {
    return await listenByPolicy(
      (port) =>
        startServer({
          warmUpBoard: true,
          // Agents claim as soon as they start: their handlers are imported before.
          warmRoutes: true,
          root,
          host: settings.host,
          port,
          tokens: settings.tokens,
          server: settings.server, // public_url, allowed origins, connection limits
          announce: false,
          warn: out,
          app, // built at the edge and handed in
        }),
      choice,
      out,
    );
  } catch (e) {
    if (e instanceof PortBusyError) throw new RunError(e.message, 1);
    throw e;
  }
}
