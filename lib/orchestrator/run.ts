/**
 * `service run [plan]`: check everything that can be checked, start the task server, then either
 * resume the run that has unfinished tasks (`run_resumed` in its journal) or start a new one
 * (`run_started`) with the plan's steps that have not landed yet, and drive its tasks to the end
 * with the {@link Orchestrator}.
 */
import { mcpDelivery, runMcpServers, writeRunMcpConfig } from "../mcp/run_servers.ts";
import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { configuredAdapter, loadConfig } from "../config/load.ts";
import { loadServerSettings } from "../config/server_config.ts";
import type { ServiceConfig } from "../config/schema.ts";
import { ValidationError } from "../config/errors.ts";
import { preflight } from "../agents/preflight.ts";
import { CooldownTracker, loadCooldowns } from "../agents/cooldown.ts";
import { configuredBudgetUsd, readCostReport } from "../cost/spend.ts";
import { agentTimeoutS } from "../agents/timeouts.ts";
import { KILL_GRACE_MS } from "../agents/process.ts";
import { reapPidFiles } from "../agents/pid_files.ts";
import { effectiveTokenSpecs } from "../auth/tokens.ts";
import { git } from "../git/git.ts";
import * as ev from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { sha256Hex } from "../journal/hash.ts";
import { loadPlan } from "../plans/load.ts";
import type { ParsedPlan } from "../plans/plan.ts";
import { type RunningServer, type ServedApp, startServer } from "../server/serve.ts";
import { listenByPolicy, PortBusyError, portChoice } from "../server/port_policy.ts";
import { UserFacingError } from "../errors.ts";
import { taskStoreFor } from "../tasks/registry.ts";
import type { TaskStore } from "../tasks/store.ts";
import { isFinished, type Task } from "../tasks/task.ts";
import { ensureServiceExcluded } from "../worktrees/exclude.ts";
import { journalPath, type WorkspacePaths, workspacePaths } from "../workspace.ts";
import { Orchestrator, type RunOutcome } from "./orchestrator.ts";
import { keyedTasks, landedSteps, plannedTasks, stepsToDo } from "./plan_steps.ts";
import { ProgressDisplay } from "./progress.ts";
import { runSetupProblems } from "./run_checks.ts";
import { newRunId, readRunState, type RunState, writeRunState } from "../runs/run_state.ts";
import { processAlive } from "../util/process_alive.ts";
import { qualityGatesFor } from "../verification/quality_gates.ts";
import { verificationLine } from "../status/format.ts";
import { colour } from "../cli/command.ts";
import {
  runsFromTrackers,
  startTrackerRun,
  TRACKER_RUN_PLAN,
  unownedTaskIds,
} from "../trackers/service_run.ts";

/** A user-facing failure of `service run`, with its exit code (spec §7.4) and the fix. */
export class RunError extends UserFacingError {
  constructor(message: string, exitCode = 1, fix?: string) {
    super(message, exitCode, fix);
    this.name = "RunError";
  }
}

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
  /** The task server's HTTP app, built at the edge (routes/_app.ts `SERVER_APP`). */
  app: ServedApp;
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

async function currentBranch(root: string): Promise<string> {
  const inside = await git(["rev-parse", "--is-inside-work-tree"], {
    cwd: root,
    allowFailure: true,
  });
  if (inside.code !== 0) {
    throw new RunError(
      `${root} is not a git repository`,
      1,
      "run `git init` and commit once, or pass --root <your repository>",
    );
  }
  const head = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  if (head.code !== 0) {
    throw new RunError("HEAD is detached", 1, "check out the branch the work should land on");
  }
  const branch = head.stdout.trim();
  const tip = await git(["rev-parse", "--verify", "--quiet", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  if (tip.code !== 0) {
    throw new RunError(
      `branch ${branch} has no commit yet`,
      1,
      "commit once before `service run`",
    );
  }
  return branch;
}

/** End agents left running by an orchestrator that died, and remove their stale PID files. */
async function reapStaleAgents(paths: WorkspacePaths, out: (line: string) => void): Promise<void> {
  await reapPidFiles(
    paths,
    5000,
    (a) => out(`stale agent ${a.session_id} (pid ${a.pid}) still running: SIGTERM, then SIGKILL`),
  );
}

async function fileDigest(path: string): Promise<string> {
  return "sha256:" + sha256Hex(await Deno.readFile(path));
}

/** A run with unfinished tasks: the one `service run` resumes. */
interface Resumable {
  runId: string;
  plan?: string;
  planSha256?: string;
  unfinished: Task[];
  taskIds: string[];
}

/** The latest run whose tasks are not all finished (the run state's first, else the newest id). */
function findResumable(store: TaskStore, state: RunState | undefined): Resumable | undefined {
  const byRun = new Map<string, Task[]>();
  for (const t of store.list()) {
    if (!t.run_id) continue;
    const list = byRun.get(t.run_id) ?? [];
    list.push(t);
    byRun.set(t.run_id, list);
  }
  const candidates = [...byRun.keys()].filter((id) => byRun.get(id)!.some((t) => !isFinished(t)))
    .sort().reverse();
  const runId = state && candidates.includes(state.run_id) ? state.run_id : candidates[0];
  if (!runId) return undefined;
  const tasks = byRun.get(runId)!;
  return {
    runId,
    plan: state?.run_id === runId ? state.plan : undefined,
    planSha256: state?.run_id === runId ? state.plan_sha256 : undefined,
    unfinished: tasks.filter((t) => !isFinished(t)),
    taskIds: tasks.map((t) => t.id),
  };
}

function describeUnfinished(tasks: Task[]): string {
  const shown = tasks.slice(0, 6).map((t) => `${t.id} (${t.status})`).join(", ");
  return tasks.length > 6 ? `${shown} and ${tasks.length - 6} more` : shown;
}

/** Check a plan and what its run needs before anything is written. */
async function checkedPlan(
  root: string,
  planFile: string,
  config: ServiceConfig,
): Promise<ParsedPlan> {
  if (!existsSync(planFile)) {
    throw new RunError(
      `no plan file ${planFile}`,
      1,
      "pass the plan to run: `service run path/to/plan.yaml` (see README.md for the format)",
    );
  }
  const plan = await loadPlan(root, planFile, config);
  await throwSetupProblems(root, config, plan.tasks.map((t) => t.role));
  return plan;
}

async function throwSetupProblems(root: string, config: ServiceConfig, roles: string[]) {
  const problems = await runSetupProblems(root, config, roles);
  if (problems.length === 0) return;
  throw new RunError(
    problems.map((p) => `${p.subject}: ${p.problem}`).join("\n  "),
    1,
    problems.map((p) => p.fix).join("; "),
  );
}

/** Run a plan to the end, or resume the unfinished run. */
export async function runPlan(options: RunPlanOptions): Promise<RunResult> {
  const root = resolve(options.root);
  const out = options.out ?? ((line: string) => console.log(line));
  const paths = workspacePaths(root);
  const config = await loadConfig(root);
  if (!config) {
    throw new ValidationError(
      join(root, "service.yaml"),
      "",
      { line: 1, col: 1 },
      "no service.yaml in the workspace",
      "create one, for example:\n    cli: claude\n    roles:\n      backend: {}",
    );
  }
  const adapter = configuredAdapter(config);
  const settings = await loadServerSettings(root); // a bad port fails before any work
  const targetBranch = await currentBranch(root);
  await ensureServiceExcluded(root);

  const previous = await readRunState(paths);
  if (
    previous && previous.status === "running" && previous.pid !== Deno.pid &&
    processAlive(previous.pid)
  ) {
    throw new RunError(
      `run ${previous.run_id} is in progress (pid ${previous.pid}, ${previous.url})`,
      1,
      "watch it with `service status`, or end it with `service stop`",
    );
  }
  const planFile = options.plan === undefined ? undefined : resolve(root, options.plan);
  const defaultPlan = join(root, "plan.yaml");
  // Everything checkable is checked before a row is written: the plan, templates, settings, CLI.
  const plan = planFile ? await checkedPlan(root, planFile, config) : undefined;
  if (!plan) await throwSetupProblems(root, config, Object.keys(config.roles));
  const env = Deno.env.toObject();
  // MCP servers (issue 13): an unset ${VAR} fails here, before a row is written.
  const mcp = await runMcpServers(config, (n) => env[n]);
  const mcpNote = mcpDelivery(adapter, mcp);
  if (mcpNote) out(adapter.acceptsMcpConfig ? mcpNote : `warning: ${mcpNote}`);
  const checked = await preflight(adapter, {
    env,
    cwd: root,
    workdir: root,
    warn: (m) => out(`warning: ${m}`),
  });

  const server = options.server ??
    await startRunServer(root, options.port, settings, out, options.app);
  const stopOnSignal = () => orchestrator?.stop();
  let orchestrator: Orchestrator | undefined;
  options.signal?.addEventListener("abort", stopOnSignal, { once: true });
  try {
    const store = await taskStoreFor(server.ctx);
    const resumable = findResumable(store, previous);
    let runId: string;
    let taskIds: string[];
    let runPlanFile: string;
    let planSha: string | undefined;
    let continuous = false;
    const resumeSame = resumable && planFile && resumable.plan === planFile &&
      resumable.planSha256 === await fileDigest(planFile);
    if (resumable && (!planFile || resumeSame)) {
      runId = resumable.runId;
      taskIds = resumable.taskIds;
      runPlanFile = resumable.plan ?? planFile ?? "";
      planSha = resumable.planSha256;
      // A continuous run stopped with adopted tasks still waiting resumes as one.
      continuous = resumable.plan === TRACKER_RUN_PLAN && runsFromTrackers(config);
      await reapStaleAgents(paths, out);
      await appendEvents(journalPath(paths, runId), [
        ev.runResumed({ run_id: runId, pid: Deno.pid }),
      ]);
      out(
        `resuming run ${runId}: ${resumable.unfinished.length} unfinished task(s): ${
          describeUnfinished(resumable.unfinished)
        }`,
      );
    } else if (resumable) {
      throw new RunError(
        `run ${resumable.runId}${
          resumable.plan ? ` (${relative(root, resumable.plan)})` : ""
        } has ${resumable.unfinished.length} unfinished task(s): ${
          describeUnfinished(resumable.unfinished)
        }`,
        1,
        `\`service run\` resumes it; or \`service cancel --all\` cancels them, then \`service run ${options.plan}\` starts a new run`,
      );
    } else if (!plan && !existsSync(defaultPlan) && runsFromTrackers(config)) {
      // Tracker hook (lib/trackers/service_run.ts): no plan, trackers configured → continuous.
      continuous = true;
      runPlanFile = TRACKER_RUN_PLAN;
      ({ runId, taskIds } = await startTrackerRun(store, {
        paths,
        adapter: adapter.name,
        targetBranch,
        out,
      }));
    } else {
      runPlanFile = planFile ?? defaultPlan;
      if (!plan && !existsSync(runPlanFile)) {
        throw new RunError(
          "nothing to run: no earlier run has unfinished tasks and there is no plan.yaml",
          1,
          "pass a plan: `service run path/to/plan.yaml`, or configure `trackers` in service.yaml " +
            "to take work from issue trackers (docs/trackers.md)",
        );
      }
      const thePlan = plan ?? await checkedPlan(root, runPlanFile, config);
      planSha = await fileDigest(runPlanFile);
      const started = await startNewRun(store, {
        paths,
        plan: thePlan,
        planFile: runPlanFile,
        planSha,
        config,
        adapter: adapter.name,
        targetBranch,
        force: options.force ?? false,
        out,
      });
      if (!started) {
        return {
          status: "completed",
          problems: [],
          counts: {},
          runId: previous?.run_id ?? "",
          url: server.url,
          upToDate: true,
        };
      }
      ({ runId, taskIds } = started);
    }
    out(
      `review board${options.server ? "" : " (live while the run lasts)"}: ${server.url}` +
        `/dashboard/review-board?run=${runId}`,
    );
    const state: RunState = {
      run_id: runId,
      pid: Deno.pid,
      plan: runPlanFile,
      plan_sha256: planSha,
      url: server.url,
      started_at: Math.floor(Date.now() / 1000),
      status: "running",
    };
    await writeRunState(paths, state);
    const tokenSpec = effectiveTokenSpecs(settings.tokens, (n) => env[n]).find((s) =>
      env[s.token_env]
    );
    const timeoutOverride = Number(env.SERVICE_AGENT_TIMEOUT_S);
    const graceOverride = Number(env.SERVICE_KILL_GRACE_S);
    let tasksJsonl = "";
    try {
      tasksJsonl = await Deno.readTextFile(paths.taskMetrics);
    } catch { /* no history yet */ }
    const progress = new ProgressDisplay(out, runId);
    let stateWrites: Promise<unknown> = Promise.resolve();
    orchestrator = new Orchestrator({
      paths,
      runId,
      journalPath: journalPath(paths, runId),
      store,
      taskIds,
      adapter,
      launch: checked.launch,
      serverUrl: server.url,
      token: tokenSpec ? env[tokenSpec.token_env] : undefined,
      targetBranch,
      maxAgents: config.max_agents ?? 4,
      model: config.model,
      effort: config.effort,
      roles: config.roles,
      agentEnv: config.agent_env,
      mcpConfigPath: await writeRunMcpConfig(paths, runId, adapter, mcp),
      requireApproval: config.review?.require_approval ?? false,
      qualityGates: (task) => qualityGatesFor(config, task.role),
      nudge: config.verification_nudge,
      onAlert: (nudge) => progress.event(verificationLine(nudge, colour) ?? "ALERT"),
      cooldowns: await cooldownTracker(paths.rateLimits, env),
      cost: await readCostReport(paths, configuredBudgetUsd(config)),
      timeoutS: (task) => {
        if (timeoutOverride > 0) return timeoutOverride;
        const minutes = config.roles[task.role]?.timeout_minutes;
        return minutes !== undefined
          ? Math.round(minutes * 60)
          : agentTimeoutS({ scope: task.scope, role: task.role }, tasksJsonl);
      },
      continuous,
      landUnreported: config.recovery.land_unreported,
      graceMs: graceOverride >= 0 && env.SERVICE_KILL_GRACE_S !== undefined
        ? graceOverride * 1000
        : KILL_GRACE_MS,
      log: (line) => progress.event(line),
      onWaiting: (waiting) => {
        stateWrites = stateWrites
          .then(() => writeRunState(paths, { ...state, waiting }))
          .catch((e) => progress.event(`cannot publish waiting reasons: ${(e as Error).message}`));
      },
    });
    if (options.signal?.aborted) orchestrator.stop();
    progress.start(() => ({
      store,
      runtimeDir: paths.runtime,
      taskIds: continuous ? orchestrator!.taskIds() : taskIds,
      orchestrator: orchestrator!,
    }));
    const running = orchestrator.run();
    // Tracker hook: tasks the trackers created before the loop subscribed join a continuous run.
    if (continuous) orchestrator.adopt(unownedTaskIds(store));
    const outcome = await running;
    progress.stop();
    if (outcome.status !== "completed") {
      // Say what is left and why, so the last lines on the terminal are the way forward.
      for (const [id, why] of Object.entries(orchestrator.waitingReasons())) out(`${id}: ${why}`);
    }
    await stateWrites; // the last word on the run state is below
    await appendEvents(journalPath(paths, runId), [
      ev.runCompleted({ run_id: runId, status: outcome.status, counts: outcome.counts }),
    ]);
    const unfinished = store.list().filter((t) => t.run_id === runId && !isFinished(t));
    const ended = {
      ...state,
      status: outcome.status,
      waiting: orchestrator.waitingReasons(),
      unfinished: unfinished.length,
    };
    await writeRunState(paths, ended);
    // The caller prints the final status line, once (lib/cli/commands/run.ts).
    return { ...outcome, runId, url: server.url, unfinished: unfinished.length };
  } finally {
    options.signal?.removeEventListener("abort", stopOnSignal);
    if (!options.server) await server.shutdown();
  }
}

/** What a new run needs. */
interface NewRun {
  paths: WorkspacePaths;
  plan: ParsedPlan;
  planFile: string;
  planSha: string;
  config: ServiceConfig;
  adapter: string;
  targetBranch: string;
  force: boolean;
  out: (line: string) => void;
}

/**
 * Journal `run_started` and create the plan's steps that have not landed yet (all of them with
 * `force`). Undefined when every step already landed: nothing to do, no run.
 */
async function startNewRun(
  store: TaskStore,
  o: NewRun,
): Promise<{ runId: string; taskIds: string[] } | undefined> {
  const keyed = keyedTasks(o.plan);
  const landed = o.force ? new Map() : await landedSteps(o.paths, o.targetBranch, o.out);
  const { todo, done } = stepsToDo(keyed, landed);
  const landedNote = done.map((t) => `${t.id} in ${t.landed.commit.slice(0, 10)}`).join(", ");
  const name = relative(o.paths.root, o.planFile);
  if (todo.length === 0) {
    o.out(
      `nothing to do: all ${done.length} step(s) of ${name} already landed (${landedNote}); ` +
        "`service run --force` runs them again",
    );
    return undefined;
  }
  const collisions = todo.map((t) => store.get(t.id)).filter((t): t is Task => t !== undefined);
  const open = collisions.filter((t) => !isFinished(t));
  if (open.length > 0) {
    throw new RunError(
      `task id(s) ${describeUnfinished(open)} of the plan are unfinished tasks of the task API`,
      1,
      `\`service cancel ${open.map((t) => t.id).join(" ")}\`, or give the steps other \`id:\`s`,
    );
  }
  const runId = newRunId();
  if (collisions.length > 0) await store.archive(collisions.map((t) => t.id), `before-${runId}`);
  await appendEvents(journalPath(o.paths, runId), [ev.runStarted({
    run_id: runId,
    plan: o.plan.name ?? name,
    plan_sha256: o.planSha,
    config_sha256: await fileDigest(join(o.paths.root, "service.yaml")),
    adapter: o.adapter,
    target_branch: o.targetBranch,
    tasks: todo.length,
    planned: plannedTasks(todo),
    ...(done.length > 0
      ? {
        already_landed: done.map((t) => ({
          task_id: t.id,
          run_id: t.landed.run_id,
          commit: t.landed.commit,
        })),
      }
      : {}),
  })]);
  await store.create(
    todo.map(({ stage: _stage, step_key: _key, ...input }) => input),
    { runId },
  );
  const landedPart = done.length > 0 ? `${done.length} already landed (${landedNote}), ` : "";
  o.out(
    `run ${runId}: ${landedPart}${todo.length} to do from ${name}, landing on ${o.targetBranch}`,
  );
  return { runId, taskIds: todo.map((t) => t.id) };
}

// The spec's 300 s cooldown; SERVICE_RATE_LIMIT_COOLDOWN_S shortens it for tests and drills.
async function cooldownTracker(
  path: string,
  env: Record<string, string>,
): Promise<CooldownTracker> {
  const loaded = await loadCooldowns(path);
  const seconds = Number(env.SERVICE_RATE_LIMIT_COOLDOWN_S);
  return seconds > 0 ? CooldownTracker.fromJSON(loaded.toJSON(), seconds) : loaded;
}

/** The run's task server (and board) on the chosen port, by the one busy-port policy. */
async function startRunServer(
  root: string,
  flagPort: number | undefined,
  settings: Awaited<ReturnType<typeof loadServerSettings>>,
  out: (line: string) => void,
  app: ServedApp,
): Promise<RunningServer> {
  const choice = portChoice(flagPort === undefined ? undefined : String(flagPort), settings);
  try {
    return await listenByPolicy(
      (port) =>
        startServer({
          warmUpBoard: true,
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
