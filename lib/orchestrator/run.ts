/**
 * `service run [plan]`: load the configuration and the plan, start the task server, record
 * `run_started` in a new journal (or `run_resumed` in the journal of an interrupted run), turn
 * the plan into tasks and drive them to the end with the {@link Orchestrator}.
 */
import { join, resolve } from "node:path";
import { configuredAdapter, loadConfig } from "../config/load.ts";
import { loadServerSettings } from "../config/server_config.ts";
import { ValidationError } from "../config/errors.ts";
import { preflight } from "../agents/preflight.ts";
import { CooldownTracker, loadCooldowns } from "../agents/cooldown.ts";
import { loadCostReport } from "../agents/cost.ts";
import { agentTimeoutS } from "../agents/timeouts.ts";
import { groupAlive, KILL_GRACE_MS, killTree } from "../agents/process.ts";
import { readPidFiles, removePidFile } from "../agents/runtime_files.ts";
import { effectiveTokenSpecs } from "../auth/tokens.ts";
import { git } from "../git/git.ts";
import { appendEvents } from "../journal/journal_file.ts";
import * as ev from "../journal/events.ts";
import { sha256Hex } from "../journal/hash.ts";
import { loadPlan } from "../plans/load.ts";
import { startServer } from "../server/serve.ts";
import { serverMounts } from "../server/mounts.ts";
import { taskStoreFor } from "../tasks/registry.ts";
import type { TaskStore } from "../tasks/store.ts";
import { ensureServiceExcluded } from "../worktrees/exclude.ts";
import { journalPath, type WorkspacePaths, workspacePaths } from "../workspace.ts";
import { Orchestrator, type RunOutcome } from "./orchestrator.ts";
import { ProgressDisplay } from "./progress.ts";
import { clearRunState, newRunId, readRunState, writeRunState } from "./run_state.ts";
import { processAlive } from "../util/process_alive.ts";

/** A user-facing failure of `service run`, with its exit code (spec §7.4). */
export class RunError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message);
    this.name = "RunError";
  }
}

/** Options of {@link runPlan}. */
export interface RunPlanOptions {
  root: string;
  /** Plan file (default `plan.yaml` in the workspace). */
  plan?: string;
  /** Port of the embedded task server (default: config / SERVICE_PORT / 8052; busy → any free port). */
  port?: number;
  out?: (line: string) => void;
  /** Stops the run (SIGINT/SIGTERM in the CLI). */
  signal?: AbortSignal;
}

/** The result of a run. */
export interface RunResult extends RunOutcome {
  runId: string;
  url: string;
}

async function currentBranch(root: string): Promise<string> {
  const inside = await git(["rev-parse", "--is-inside-work-tree"], {
    cwd: root,
    allowFailure: true,
  });
  if (inside.code !== 0) {
    throw new RunError(
      `${root} is not a git repository: run \`git init\` and commit once, or pass --root`,
    );
  }
  const head = await git(["symbolic-ref", "--quiet", "--short", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  if (head.code !== 0) {
    throw new RunError("HEAD is detached: check out the branch the work should land on");
  }
  const branch = head.stdout.trim();
  const tip = await git(["rev-parse", "--verify", "--quiet", "HEAD"], {
    cwd: root,
    allowFailure: true,
  });
  if (tip.code !== 0) {
    throw new RunError(`branch ${branch} has no commit yet: commit once before \`service run\``);
  }
  return branch;
}

/** End agents left running by an orchestrator that died, and remove their stale PID files. */
async function reapStaleAgents(paths: WorkspacePaths, out: (line: string) => void): Promise<void> {
  for (const record of (await readPidFiles(paths.runtime)).records) {
    if (groupAlive(record.pgid)) {
      out(
        `stale agent ${record.session_id} (pid ${record.pid}) still running: SIGTERM, then SIGKILL`,
      );
      killTree(record.pgid, "SIGTERM");
      const deadline = Date.now() + 5000;
      while (groupAlive(record.pgid) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
      }
      if (groupAlive(record.pgid)) killTree(record.pgid, "SIGKILL");
    }
    await removePidFile(paths.runtime, record.session_id);
  }
}

async function createPlanTasks(
  store: TaskStore,
  tasks: Awaited<ReturnType<typeof loadPlan>>["tasks"],
  runId: string,
): Promise<void> {
  const existing = tasks.filter((t) => store.get(t.id));
  if (existing.length > 0) {
    const unfinished = existing.filter((t) =>
      !["CLOSED", "FAILED", "CANCELLED"].includes(store.get(t.id)!.status)
    );
    if (unfinished.length > 0) {
      throw new RunError(
        `tasks ${
          unfinished.map((t) => `${t.id} (${store.get(t.id)!.status})`).join(", ")
        } of an earlier run are ` +
          "not finished: resume it with `service run` (no new plan), or cancel them with POST /tasks/<id>/cancel",
      );
    }
    await store.archive(existing.map((t) => t.id), `before-${runId}`);
  }
  await store.create(tasks.map(({ stage: _stage, ...input }) => input));
}

/** Run a plan to the end (or resume the interrupted run). */
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
  const targetBranch = await currentBranch(root);
  await ensureServiceExcluded(root);

  const previous = await readRunState(paths);
  if (
    previous && previous.status === "running" && previous.pid !== Deno.pid &&
    processAlive(previous.pid)
  ) {
    throw new RunError(
      `run ${previous.run_id} is in progress (pid ${previous.pid}, ${previous.url}): watch it with \`service status\` or end it with \`service stop\``,
    );
  }
  const resuming = previous !== undefined &&
    (options.plan === undefined || resolve(root, options.plan) === previous.plan);
  const planFile = resuming ? previous!.plan : resolve(root, options.plan ?? "plan.yaml");
  const plan = await loadPlan(root, planFile, config);
  const runId = resuming ? previous!.run_id : newRunId();
  if (resuming) await reapStaleAgents(paths, out);

  const env = Deno.env.toObject();
  const checked = await preflight(adapter, {
    env,
    cwd: root,
    workdir: root,
    warn: (m) => out(`warning: ${m}`),
  });

  const settings = await loadServerSettings(root);
  const server = await startOnFreePort(root, options.port ?? settings.port, settings, out);
  const stopOnSignal = () => orchestrator?.stop();
  let orchestrator: Orchestrator | undefined;
  options.signal?.addEventListener("abort", stopOnSignal, { once: true });
  try {
    const store = await taskStoreFor(server.ctx);
    const journal = journalPath(paths, runId);
    if (resuming) {
      await appendEvents(journal, [ev.runResumed({ run_id: runId, pid: Deno.pid })]);
      out(`resuming run ${runId} (${plan.tasks.length} tasks, plan ${planFile})`);
    } else {
      await appendEvents(journal, [ev.runStarted({
        run_id: runId,
        plan: plan.name ?? planFile.split("/").pop()!,
        plan_sha256: "sha256:" + sha256Hex(await Deno.readFile(planFile)),
        config_sha256: "sha256:" + sha256Hex(await Deno.readFile(join(root, "service.yaml"))),
        adapter: adapter.name,
        target_branch: targetBranch,
        tasks: plan.tasks.length,
      })]);
      await createPlanTasks(store, plan.tasks, runId);
      out(`run ${runId}: ${plan.tasks.length} tasks from ${planFile}, landing on ${targetBranch}`);
    }
    out(
      `review board (live while the run lasts): ${server.url}/dashboard/review-board?run=${runId}`,
    );
    await writeRunState(paths, {
      run_id: runId,
      pid: Deno.pid,
      plan: planFile,
      url: server.url,
      started_at: Math.floor(Date.now() / 1000),
      status: "running",
    });
    const tokenSpec = effectiveTokenSpecs(settings.tokens, (n) => env[n]).find((s) =>
      env[s.token_env]
    );
    const timeoutOverride = Number(env.SERVICE_AGENT_TIMEOUT_S);
    const graceOverride = Number(env.SERVICE_KILL_GRACE_S);
    let tasksJsonl = "";
    try {
      tasksJsonl = await Deno.readTextFile(join(paths.metrics, "tasks.jsonl"));
    } catch { /* no history yet */ }
    const progress = new ProgressDisplay(out, runId);
    let stateWrites: Promise<unknown> = Promise.resolve();
    orchestrator = new Orchestrator({
      paths,
      runId,
      journalPath: journal,
      store,
      taskIds: plan.tasks.map((t) => t.id),
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
      requireApproval: config.review?.require_approval ?? false,
      qualityGates: [],
      cooldowns: await cooldownTracker(join(paths.runtime, "rate_limits.json"), env),
      cost: await loadCostReport(
        join(paths.runtime, "cost_report.json"),
        config.budget_usd === undefined ? null : config.budget_usd,
      ),
      timeoutS: (task) => {
        if (timeoutOverride > 0) return timeoutOverride;
        const minutes = config.roles[task.role]?.timeout_minutes;
        return minutes !== undefined
          ? Math.round(minutes * 60)
          : agentTimeoutS({ scope: task.scope, role: task.role }, tasksJsonl);
      },
      graceMs: graceOverride >= 0 && env.SERVICE_KILL_GRACE_S !== undefined
        ? graceOverride * 1000
        : KILL_GRACE_MS,
      log: (line) => progress.event(line),
      onWaiting: (waiting) => {
        stateWrites = stateWrites
          .then(() => readRunState(paths))
          .then((state) => state && writeRunState(paths, { ...state, waiting }))
          .catch((e) => progress.event(`cannot publish waiting reasons: ${(e as Error).message}`));
      },
    });
    if (options.signal?.aborted) orchestrator.stop();
    progress.start(() => ({
      store,
      runtimeDir: paths.runtime,
      taskIds: plan.tasks.map((t) => t.id),
      orchestrator: orchestrator!,
    }));
    const outcome = await orchestrator.run();
    progress.stop();
    await stateWrites; // the last word on the run state is below
    await appendEvents(journal, [ev.runCompleted({ run_id: runId, status: outcome.status })]);
    if (outcome.status === "stopped") {
      await writeRunState(paths, {
        ...(await readRunState(paths))!,
        status: "stopped",
        waiting: {},
      });
      out(`run ${runId} stopped; \`service run\` resumes it`);
    } else {
      await clearRunState(paths);
    }
    return { ...outcome, runId, url: server.url };
  } finally {
    options.signal?.removeEventListener("abort", stopOnSignal);
    await server.shutdown();
  }
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

async function startOnFreePort(
  root: string,
  port: number,
  settings: Awaited<ReturnType<typeof loadServerSettings>>,
  out: (line: string) => void,
) {
  const start = (p: number) =>
    startServer({
      root,
      host: settings.host,
      port: p,
      tokens: settings.tokens,
      announce: false,
      warn: out,
      ...serverMounts(),
    });
  try {
    return await start(port);
  } catch (e) {
    if (!(e instanceof Deno.errors.AddrInUse) || port === 0) throw e;
    out(`port ${port} is busy; the run's task server takes a free port instead`);
    return await start(0);
  }
}
