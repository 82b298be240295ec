/**
 * The run loop's settings (pure): service.yaml, the environment's overrides (for tests and
 * drills) and the task history, read once by `runPlan`, become the plain values and per-task
 * functions the {@link Orchestrator} runs with.
 */
import { KILL_GRACE_MS } from "../agents/process.ts";
import { agentTimeoutS } from "../agents/timeouts.ts";
import type { TokenSpec } from "../auth/tokens.ts";
import type { CommandCheck, RoleSettings, ServiceConfig } from "../config/schema.ts";
import type { Task } from "../tasks/task.ts";
import type { NudgeSettings } from "../verification/nudge.ts";
import type { WorktreeEnvConfig } from "../worktree_env/spec.ts";
import { qualityGatesFor } from "../verification/quality_gates.ts";
import type { BatchSettings } from "../batch/mod.ts";
import { maxLandedFileBytes } from "../protect/file_sizes.ts";

/** What a run's settings are read from. */
export interface SettingsSource {
  config: ServiceConfig;
  /** The run's environment (lib/runner/run.ts: the process's, or the caller's). */
  env: Readonly<Record<string, string>>;
  /** The task server's tokens (`auth.tokens`, server settings). */
  tokens: TokenSpec[];
  /** `.sdd/metrics/tasks.jsonl`: earlier agents' durations (adaptive timeouts). */
  taskHistory: string;
}

/** The loop's settings. */
export interface OrchestratorSettings {
  maxAgents: number;
  /** `heartbeat_timeout_s`: a remote worker's lease (DESIGN.md §16). */
  heartbeatTimeoutS?: number;
  /** `landing.remote`: the git remote remote workers fetch from and push to (DESIGN.md §16). */
  remote?: string;
  model?: string;
  effort?: string;
  /** `roles` of service.yaml (per-role model, effort, max_agents, agent_env). */
  roles: Readonly<Record<string, RoleSettings>>;
  /** `agent_env` of service.yaml. */
  agentEnv: readonly string[];
  /** `worktree`, top level and per role (DESIGN.md §13). */
  worktreeEnv: WorktreeEnvConfig;
  requireApproval: boolean;
  /** `protected_paths` (DESIGN.md §18): globs added to the protected defaults. */
  protectedPaths: readonly string[];
  /**
   * `max_landed_file_mb` in bytes (DESIGN.md §18): a diff adding or growing a file over it waits
   * for an operator's merge; null: no limit; absent: the default (10 MB).
   */
  maxLandedFileBytes?: number | null;
  /** `enforce_owned_files`: refuse a diff that leaves its task's owned_files. */
  enforceOwnedFiles: boolean;
  /** Modules service.yaml imports (`adapters.<n>.module`, `trackers.<n>.module`): protected. */
  configModules: readonly string[];
  /** Quality gates of a task: top-level plus its role's (`quality_gates`). */
  qualityGates: (task: Pick<Task, "role">) => CommandCheck[];
  /** Thresholds of the verification alert (`verification_nudge`). */
  nudge: NudgeSettings;
  /** `recovery.land_unreported`. */
  landUnreported: boolean;
  /** Wall-clock limit of an agent, by task (seconds). */
  timeoutS: (task: Pick<Task, "role" | "scope">) => number;
  /** SIGTERM to SIGKILL grace (ms). */
  graceMs: number;
  /** `agent_log_max_mb`, in bytes: the cap of each agent's log (lib/process/capped_log.ts). */
  agentLogMaxBytes: number;
  /**
   * How long a run with nothing left but merges only the user can unblock waits before it ends
   * (ms), when `SERVICE_MERGE_WAIT_S` sets it (default 60 s: CoreSettings).
   */
  stuckMergeWaitMs?: number;
  /** The spawn block after a rate limit (s), when the environment shortens the spec's 300 s. */
  rateLimitCooldownS?: number;
  /** `batch:` (the batch lane). */
  batch: BatchSettings;
  /**
   * The run's environment, read once at its start: what agents inherit through the allow-list
   * and where the container runtime is found. Never the process's read again mid-run.
   */
  processEnv: Readonly<Record<string, string>>;
}

/** The settings of a run from its configuration, environment and history. */
export function orchestratorSettings(source: SettingsSource): OrchestratorSettings {
  const { config, env } = source;
  const timeoutOverride = Number(env.SERVICE_AGENT_TIMEOUT_S);
  const grace = Number(env.SERVICE_KILL_GRACE_S);
  const cooldown = Number(env.SERVICE_RATE_LIMIT_COOLDOWN_S);
  const mergeWait = Number(env.SERVICE_MERGE_WAIT_S);
  return {
    processEnv: env,
    maxAgents: config.max_agents ?? 4,
    heartbeatTimeoutS: config.heartbeat_timeout_s,
    remote: config.landing.remote,
    ...(config.model ? { model: config.model } : {}),
    ...(config.effort ? { effort: config.effort } : {}),
    roles: config.roles,
    agentEnv: config.agent_env,
    worktreeEnv: { worktree: config.worktree, roles: config.roles },
    requireApproval: config.review.require_approval,
    protectedPaths: config.protected_paths,
    maxLandedFileBytes: maxLandedFileBytes(config.max_landed_file_mb),
    enforceOwnedFiles: config.enforce_owned_files,
    configModules: [
      ...Object.values(config.adapters).map((a) => a.module),
      ...Object.values(config.trackers).flatMap((t) => t.module ? [t.module] : []),
    ],
    qualityGates: (task) => qualityGatesFor(config, task.role),
    nudge: config.verification_nudge,
    landUnreported: config.recovery.land_unreported,
    timeoutS: (task) => {
      if (timeoutOverride > 0) return timeoutOverride;
      const minutes = config.roles[task.role]?.timeout_minutes;
      return minutes !== undefined
        ? Math.round(minutes * 60)
        : agentTimeoutS({ scope: task.scope, role: task.role }, source.taskHistory);
    },
    graceMs: env.SERVICE_KILL_GRACE_S !== undefined && grace >= 0 ? grace * 1000 : KILL_GRACE_MS,
    agentLogMaxBytes: Math.round(config.agent_log_max_mb * 1024 * 1024),
    ...(cooldown > 0 ? { rateLimitCooldownS: cooldown } : {}),
    ...(env.SERVICE_MERGE_WAIT_S !== undefined && mergeWait >= 0
      ? { stuckMergeWaitMs: mergeWait * 1000 }
      : {}),
    batch: {
      ...(config.batch.api_url ? { apiUrl: config.batch.api_url } : {}),
      maxRequests: config.batch.max_requests,
      contextFiles: config.batch.context_files,
      pollIntervalS: config.batch.poll_interval_s,
    },
  };
}
