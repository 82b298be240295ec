/**
 * The parts of a run, each built by one small factory from the loop's options and the parts
 * built before it, so that the loop's constructor (orchestrator.ts) reads as the list of its
 * lanes: the task work and its integration lane, pull-request landing, spend and rate limits,
 * this machine's agents, remote workers (and Kubernetes Jobs), and the batch lane.
 */
import { treeContainer } from "../container/tree_runner.ts";
import { SpendTracker } from "../cost/budget.ts";
import { AgentPool, RateLimitGuard } from "../agent_session/lane.ts";
import { BatchLane, batchRoutingHint } from "../batch/mod.ts";
import { IntegrationLane, janitorSignals, TaskWork } from "../integration/mod.ts";
import { type PullRequestLanding, pullRequestLanding } from "../landing/mod.ts";
import { Launcher, type LaunchTask, type PreparedCluster } from "../kubernetes/mod.ts";
import { Protection } from "../protect/judge.ts";
import { DEFAULT_MAX_LANDED_FILE_MB, maxLandedFileBytes } from "../protect/file_sizes.ts";
import { VerificationStep } from "../verification/completion.ts";
import { WorktreeEnvironments } from "../worktree_env/environments.ts";
import type { CoreEvent } from "./core/protocol.ts";
import type { OrchestratorOptions } from "./orchestrator.ts";
import { RemoteWork, TicketBook } from "../workers/lane.ts";

/** What the loop gives every lane: where its events go, and the clock. */
export interface LoopHooks {
  /** An event for the core, or I/O that yields events when the loop awaits it. */
  push: (item: CoreEvent | (() => Promise<CoreEvent[]>)) => void;
  clock: () => number;
}

/**
 * How many finished tasks are captured and verified at once: their git calls and gates share the
 * machine's cores with the agents, and no more can finish at once than run at once.
 */
function verifications(maxAgents: number): number {
  return Math.max(1, Math.min(maxAgents, navigator.hardwareConcurrency * 2));
}

/** The worktree environments of the run's agents (DESIGN.md §13). */
export function worktreeEnvironments(o: OrchestratorOptions): WorktreeEnvironments {
  return new WorktreeEnvironments({
    root: o.paths.root,
    config: o.worktreeEnv,
    portsDir: o.paths.portLeases,
  });
}

/** What the task work is given by the parts built after it. */
export interface TaskWorkParts {
  environments: WorktreeEnvironments;
  /** The adapter that ran `sessionId` (the log reader of its completion). */
  sessionAdapter: (sessionId: string) => string;
  landing: () => PullRequestLanding | undefined;
  agentEnv: (taskId: string, sessionId: string) => Promise<Record<string, string>>;
}

/** The task work of the run: verification, gates where the agents run, teardowns, merges. */
export function taskWork(o: OrchestratorOptions, parts: TaskWorkParts): TaskWork {
  const iso = o.isolation;
  const treeOf = (tree: string, phase: "gate" | "teardown") => ({
    root: o.paths.root,
    tree,
    runId: o.runId,
    phase,
    // A teardown may need what setup needed (setup_network); gates get none.
    network: phase === "teardown" && iso?.settings.setupNetwork
      ? "default" as const
      : "none" as const,
    processEnv: o.processEnv,
    runtimeDir: o.paths.runtime,
  });
  return new TaskWork({
    paths: o.paths,
    runId: o.runId,
    journalPath: o.journalPath,
    targetBranch: o.targetBranch,
    verification: new VerificationStep({
      paths: o.paths,
      runId: o.runId,
      journalPath: o.journalPath,
      targetBranch: o.targetBranch,
      store: o.store,
      qualityGates: o.qualityGates,
      signals: janitorSignals,
      evaluateBeforeMerge: o.requireApproval,
      nudge: o.nudge,
      onAlert: o.onAlert,
      warn: o.log,
      adapter: parts.sessionAdapter,
      prepareGateTree: async (task, dir) => {
        await parts.environments.prepareGateTree(task.role, dir);
      },
      // The gates run the agent's code: where the agents run (DESIGN.md §14), with no network.
      ...(iso ? { gateRunner: (dir: string) => treeContainer(iso, treeOf(dir, "gate")) } : {}),
    }),
    warn: o.log,
    landing: parts.landing,
    environments: parts.environments,
    ...(iso
      ? { teardownRunner: (tree: string) => treeContainer(iso, treeOf(tree, "teardown")) }
      : {}),
    agentEnv: parts.agentEnv,
    protection: new Protection({
      paths: o.paths,
      protectedPaths: o.protectedPaths ?? [],
      maxFileBytes: o.maxLandedFileBytes === undefined
        ? maxLandedFileBytes(DEFAULT_MAX_LANDED_FILE_MB)
        : o.maxLandedFileBytes,
      modules: o.configModules ?? [],
      planFile: o.planFile,
    }),
  });
}

/** The run's pull-request landing (DESIGN.md §12), when it lands through pull requests. */
export function landing(
  o: OrchestratorOptions,
  work: TaskWork,
  hooks: LoopHooks,
): PullRequestLanding | undefined {
  return o.landing && pullRequestLanding(o.landing, {
    root: o.paths.root,
    runId: o.runId,
    journalPath: o.journalPath,
    work,
    serverUrl: o.serverUrl,
    onChange: (taskId) => hooks.push({ type: "landing_changed", taskId }),
    warn: o.log,
    now: hooks.clock,
  });
}

/** The integration lane: verifications side by side, merges and rebases one at a time. */
export function integrationLane(
  o: OrchestratorOptions,
  work: TaskWork,
  hooks: LoopHooks,
): IntegrationLane<CoreEvent> {
  return new IntegrationLane<CoreEvent>({
    deliver: (events) => {
      for (const event of events) hooks.push(event);
    },
    fail: o.log,
    verifications: verifications(o.maxAgents),
    merge: async (taskIds, prepared) => {
      const results = await work.merge(taskIds.map((id) => o.store.require(id)), prepared);
      return results.map((result, i) => ({ type: "merge_result", taskId: taskIds[i], result }));
    },
  });
}

/** The run's spend: the budget stop and the cost records. */
export function spendTracker(o: OrchestratorOptions): SpendTracker {
  return new SpendTracker(o.paths, o.adapter, o.cost, batchRoutingHint(o.adapter.name));
}

/** The guard that parks rate-limited adapters until their limit resets. */
export function rateLimitGuard(o: OrchestratorOptions, hooks: LoopHooks): RateLimitGuard {
  return new RateLimitGuard({
    cooldowns: o.cooldowns,
    runtimeDir: o.paths.runtime,
    nowS: () => hooks.clock() / 1000,
  });
}

/** What the agents share with the parts built before them. */
export interface AgentParts {
  environments: WorktreeEnvironments;
  work: TaskWork;
  spend: SpendTracker;
}

/** The agents this machine runs, with the configured adapter and its ready fallbacks. */
export function agentPool(
  o: OrchestratorOptions,
  parts: AgentParts & { rateLimits: RateLimitGuard },
  hooks: LoopHooks,
): AgentPool {
  return new AgentPool({
    paths: o.paths,
    runId: o.runId,
    store: o.store,
    adapters: new Map(
      [{ adapter: o.adapter, launch: o.launch }, ...(o.fallbacks ?? [])]
        .map((r) => [r.adapter.name, r]),
    ),
    resolveAdapter: o.resolveAdapter,
    isolation: o.isolation,
    serverUrl: o.serverUrl,
    model: o.model,
    effort: o.effort,
    roles: o.roles,
    agentEnv: o.agentEnv,
    processEnv: o.processEnv,
    mcpConfigPath: o.mcpConfigPath,
    timeoutS: o.timeoutS,
    graceMs: o.graceMs,
    logMaxBytes: o.agentLogMaxBytes,
    work: parts.work,
    spend: parts.spend,
    rateLimits: parts.rateLimits,
    landUnreported: o.landUnreported,
    environments: parts.environments,
    log: o.log,
    clock: hooks.clock,
  });
}

/** The claim tickets of the run's Kubernetes Jobs (DESIGN.md §17), when Jobs are workers. */
export function ticketBook(o: OrchestratorOptions, hooks: LoopHooks): TicketBook | undefined {
  return o.kubernetes &&
    new TicketBook({ path: `${o.paths.runtime}/claim_tickets.json`, clock: hooks.clock });
}

/** The tasks remote workers run (DESIGN.md §16). */
export function remoteWork(
  o: OrchestratorOptions,
  parts: AgentParts & { agents: AgentPool; tickets: TicketBook | undefined },
  hooks: LoopHooks,
): RemoteWork {
  return new RemoteWork({
    paths: o.paths,
    runId: o.runId,
    store: o.store,
    remote: o.remote ?? "origin",
    adapters: new Map(
      [{ adapter: o.adapter }, ...(o.fallbacks ?? [])].map((r) => [r.adapter.name, r.adapter]),
    ),
    roles: o.roles,
    model: o.model,
    effort: o.effort,
    timeoutS: o.timeoutS,
    graceMs: o.graceMs,
    work: parts.work,
    spend: parts.spend,
    environments: parts.environments,
    template: (role) => parts.agents.template(role),
    attemptNumber: (taskId) => parts.agents.attemptNumber(taskId),
    sessionId: () => parts.agents.newSessionId(),
    enqueue: (work) => hooks.push(work),
    push: (event) => hooks.push(event),
    landUnreported: o.landUnreported,
    heartbeatTimeoutS: o.heartbeatTimeoutS ?? 45,
    log: o.log,
    clock: hooks.clock,
    ...(parts.tickets ? { tickets: parts.tickets } : {}),
  });
}

/** The batch lane (DESIGN.md §15). */
export function batchLane(
  o: OrchestratorOptions,
  parts: AgentParts & { agents: AgentPool },
  hooks: LoopHooks,
): BatchLane {
  return new BatchLane({
    paths: o.paths,
    runId: o.runId,
    store: o.store,
    adapter: o.adapter,
    endpoint: o.batchEndpoint,
    settings: o.batch,
    model: o.model,
    roles: o.roles,
    template: (role) => parts.agents.template(role),
    attemptNumber: (taskId) => parts.agents.attemptNumber(taskId),
    work: parts.work,
    spend: parts.spend,
    push: (events) => {
      for (const event of events) hooks.push(event);
    },
    log: o.log,
    clock: hooks.clock,
    api: o.batchApi,
    environments: parts.environments,
    agentEnv: (taskId, sessionId) => parts.agents.environmentFor(taskId, sessionId),
  });
}

/** What the launcher of the run's Jobs asks of the loop. */
export interface LauncherParts {
  cluster: PreparedCluster;
  tickets: TicketBook;
  agents: AgentPool;
  /** The run's tasks now (the launcher sizes Jobs by them). */
  tasks: () => Map<string, LaunchTask>;
  /** Ask the core, as a worker does, for up to `free` tasks to reserve. */
  reserve: (free: number) => Promise<{ taskId: string }[]>;
  /** A Job's session was lost: what it pushed is fetched. */
  lost: (sessionId: string, reason: string) => void;
}

/** The launcher of the run's Jobs (DESIGN.md §17). */
export function kubernetesLauncher(
  o: OrchestratorOptions,
  parts: LauncherParts,
  hooks: LoopHooks,
): Launcher {
  return new Launcher({
    ...parts.cluster,
    tickets: parts.tickets,
    runId: o.runId,
    tasks: parts.tasks,
    timeoutS: (taskId) => o.timeoutS(o.store.require(taskId)),
    sessionId: () => parts.agents.newSessionId(),
    reserve: parts.reserve,
    lapse: (taskId, reason) => hooks.push({ type: "launch_lapsed", taskId, reason }),
    adopt: (taskId, job) => hooks.push({ type: "launch_adopted", taskId, job }),
    lost: parts.lost,
    log: o.log,
    clock: hooks.clock,
  });
}
