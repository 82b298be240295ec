/**
 * One agent session: a worktree on `agent/<session>` cut from the target's tip, the agent CLI
 * started there in its own process group with an allow-listed environment, its PID file and a
 * heartbeat every 15 s, and a wall-clock timeout (SIGTERM, grace, SIGKILL of the whole group).
 */
import { join } from "node:path";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { agentEnvironment } from "../agents/env.ts";
import { prepareHeadless } from "../agents/launch.ts";
import { injectSkills } from "../agents/skills.ts";
import { type AgentProcess, spawnAgent } from "../agents/process.ts";
import { ProgressWatch } from "../agents/progress_watch.ts";
import type { PreflightResult } from "../agents/preflight.ts";
import {
  type PidRecord,
  removePidFile,
  sessionLogPath,
  writeHeartbeat,
  writePidFile,
} from "../agents/runtime_files.ts";
import { createWorktree, type Worktree } from "../worktrees/worktrees.ts";
import { sealWorktree, settleWorktree } from "../worktrees/trees.ts";
import { hostLauncher, type Launcher } from "../process/launcher.ts";
import type { PreparedWorktree, WorktreeEnvironments } from "../worktree_env/environments.ts";
import type { Task } from "../tasks/task.ts";
import type { WorkspacePaths } from "../workspace.ts";
import type { EndReason } from "../agents/end_reason.ts";
import type { ContainerIsolation } from "../container/probe.ts";
import { sessionContainer } from "./session_container.ts";
import type { SessionContainer } from "../container/session.ts";

/** Heartbeat file update interval (spec §8). */
export const HEARTBEAT_INTERVAL_MS = 15_000;

/** PID metadata of a session, with what recovery needs after a crash of the orchestrator. */
export interface SessionRecord extends PidRecord {
  worktree: string;
  branch: string;
  base: string;
}

/** What starting a session needs. */
export interface SessionStart {
  paths: WorkspacePaths;
  runId: string;
  task: Task;
  sessionId: string;
  /** The target commit the work is based on (its diff is taken from here). */
  baseCommit: string;
  /** Where the worktree is cut when it continues earlier work (default `baseCommit`). */
  startCommit?: string;
  adapter: AgentAdapter;
  launch: PreflightResult["launch"];
  argv: string[];
  serverUrl: string;
  token?: string;
  timeoutS: number;
  graceMs: number;
  /** The cap of the agent's log (bytes; default lib/process/capped_log.ts's). */
  logMaxBytes?: number;
  /** More variables to forward (`agent_env`). */
  agentEnv?: readonly string[];
  /** The environment the forwarded variables come from (default: this process's). */
  processEnv?: Readonly<Record<string, string>>;
  /** Variables set on top of the forwarded ones (the adapter's MCP settings, lib/mcp). */
  extraEnv?: Readonly<Record<string, string>>;
  /** Run the agent in a container (DESIGN.md §14; `launch` is then the CLI in the image). */
  isolation?: ContainerIsolation;
  /** The run's MCP configuration file the agent reads (copied into its container). */
  mcpConfigPath?: string;
  /** Where problems that change nothing are reported (default: standard error). */
  warn?: (line: string) => void;
  /** The workspace's worktree environments (DESIGN.md §13); absent: a bare worktree. */
  environments?: WorktreeEnvironments;
}

/** What a session's environment is built from. */
export type SessionEnvSource =
  & Pick<SessionStart, "adapter" | "serverUrl" | "token" | "runId" | "sessionId" | "agentEnv">
  & Pick<SessionStart, "extraEnv" | "processEnv">
  & { taskId: string; ports: readonly number[] };

/**
 * The environment of an agent session (and of its worktree's setup and teardown): the allow-list
 * of lib/agents/env.ts with the `SERVICE_*` variables and the leased ports, plus `extraEnv`.
 */
export function sessionEnvironment(s: SessionEnvSource): Record<string, string> {
  const env = agentEnvironment(s.adapter, s.processEnv ?? Deno.env.toObject(), {
    serverUrl: s.serverUrl,
    token: s.token,
    runId: s.runId,
    taskId: s.taskId,
    sessionId: s.sessionId,
    ports: s.ports,
  }, { extraNames: s.agentEnv });
  return Object.assign(env, s.extraEnv ?? {});
}

/**
 * The start failed after the worktree was cut: the caller reaps `worktree` (which releases its
 * ports and keeps its log) and reads why from `cause` (a `WorktreeSetupError` for a setup).
 */
export class SessionStartError extends Error {
  constructor(
    override readonly cause: unknown,
    readonly worktree: Worktree,
    readonly logPath: string,
    /** The agent's environment, when it was built (teardown runs with it). */
    readonly env: Record<string, string> | undefined,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = "SessionStartError";
  }
}

/**
 * Host processes (lib/process/launcher.ts) whose end is followed, before anyone reads their
 * status, by lib/worktrees/trees.ts's settle of the session's worktree: what its HEAD names
 * becomes its branch's, its git files are put back and its index rebuilt, so the service's next
 * git there reads nothing the agent wrote into them.
 */
function settlingHostLauncher(start: SessionStart): Launcher {
  const warn = start.warn ?? ((line: string) => console.error(line));
  return {
    launch(argv, options) {
      const launched = hostLauncher.launch(argv, options);
      return {
        ...launched,
        finish: async () => {
          try {
            const settled = await settleWorktree(start.paths.root, start.sessionId);
            if (settled.repaired.length > 0) {
              warn(
                `${start.sessionId}: the agent changed its worktree's git files ` +
                  `(${settled.repaired.join("; ")}); they were put back`,
              );
            }
          } catch (e) {
            warn(
              `${start.sessionId}: its worktree's git files not checked: ${(e as Error).message}`,
            );
          }
        },
      };
    },
  };
}

/** A live (or just ended) agent session. */
export class AgentSession {
  readonly task: Task;
  readonly sessionId: string;
  readonly worktree: Worktree;
  readonly proc: AgentProcess;
  readonly startedAt: number;
  readonly deadline: number;
  readonly logPath: string;
  /** The adapter whose CLI runs it (the configured one, or a fallback). */
  readonly adapter: AgentAdapter;
  /** Why the orchestrator ended it (timeout, stop, rate limit), when it did. */
  endedBy?: EndReason;
  /** When the loop first saw the task reported (DONE) while the agent still ran. */
  reportedAt?: number;
  /** Log bytes already scanned for rate limits. */
  scannedBytes = 0;
  /** `worktree`, or `container:<runtime>:<image id>` (journaled with the claim). */
  readonly isolation: string;
  #box: SessionContainer | undefined;
  /** What the worktree environment gave the worktree (absent without environments). */
  readonly prepared?: PreparedWorktree;
  /** The agent's environment (its teardown runs with it). */
  readonly env: Record<string, string>;
  /** Whether its output still shows progress, or only reconnect notices (lib/agents/progress_watch.ts). */
  readonly progress: ProgressWatch;
  /** The run's terminal was told it reconnects (said once per stall). */
  reconnectSaid = false;
  #start: SessionStart;

  private constructor(
    start: SessionStart,
    worktree: Worktree,
    proc: AgentProcess,
    env: Record<string, string>,
    prepared: PreparedWorktree | undefined,
    isolation: string,
    progress: ProgressWatch,
  ) {
    this.#start = start;
    this.progress = progress;
    this.env = env;
    this.isolation = isolation;
    if (prepared) this.prepared = prepared;
    this.task = start.task;
    this.sessionId = start.sessionId;
    this.worktree = worktree;
    this.proc = proc;
    this.startedAt = proc.startedAt;
    this.deadline = this.startedAt + start.timeoutS * 1000;
    this.logPath = proc.logPath;
    this.adapter = start.adapter;
  }

  /**
   * Cut the worktree, prepare its environment (copies, links, ignores, ports, setup), spawn the
   * agent, write its PID file. A failure after the cut is a {@link SessionStartError}.
   */
  static async start(start: SessionStart): Promise<AgentSession> {
    const cut = await createWorktree(
      start.paths.root,
      start.sessionId,
      start.startCommit ?? start.baseCommit,
    );
    const worktree = { ...cut, base: start.baseCommit };
    const logPath = sessionLogPath(start.paths.runtime, start.sessionId);
    let env: Record<string, string> | undefined;
    let proc: AgentProcess | undefined;
    let box: SessionContainer | undefined;
    const progress = new ProgressWatch();
    try {
      await injectSkills(start.adapter, worktree.path); // spec §7.3: excluded, never staged
      await Deno.mkdir(join(logPath, ".."), { recursive: true });
      const environments = start.environments;
      const ports = environments
        ? await environments.leasePorts(start.sessionId, start.task.role)
        : [];
      env = sessionEnvironment({ ...start, taskId: start.task.id, ports });
      // What the CLI needs to start headless (auth selection, endpoint overrides): lib/agents/launch.ts.
      const headless = await prepareHeadless(start.adapter, env, start.paths.runtime);
      const request = { tree: worktree.path, sessionId: start.sessionId, ports, logPath };
      const populated = await environments?.populate({ ...request, role: start.task.role });
      // Its git files as the service made them, before anything untrusted runs there.
      const admin = await sealWorktree(start.paths.root, start.sessionId);
      // Under container isolation both phases run in containers: setup (phase 1), the agent (2).
      box = start.isolation &&
        await sessionContainer(start, { worktree, admin, env: headless.env, logPath }).catch(
          (e) => {
            // Not the agent's program missing (a NotFound is taken for that, and not retried).
            throw new Error(`preparing the agent's container failed: ${(e as Error).message}`);
          },
        );
      const command = start.launch.command;
      const args = [...start.launch.prefixArgs, ...headless.args, ...start.argv];
      if (box) {
        // Its container starts now and waits for `go` while the worktree is set up.
        const spec = environments?.spec(start.task.role);
        const setupS = spec && spec.setup.length > 0 ? spec.setup_timeout_s : 0;
        box.agent.hold([command, ...args], { cwd: worktree.path, env: box.env }, setupS);
      }
      const prepared = populated && await environments!.setup({
        ...request,
        role: start.task.role,
        env: box ? box.setupEnv(env) : env,
        ...(box ? { launcher: box.setup } : {}),
      }, populated);
      proc = spawnAgent({
        onLine: (line) => progress.see(line, Date.now()),
        command,
        args,
        cwd: worktree.path,
        env: box ? box.env : headless.env,
        logPath,
        logMaxBytes: start.logMaxBytes,
        graceMs: start.graceMs,
        launcher: box ? box.agent : settlingHostLauncher(start),
      });
      return await AgentSession.#started(start, worktree, proc, env, prepared, box, progress);
    } catch (e) {
      await proc?.end("start failed"); // nothing runs that the service does not know of
      await box?.release(); // its worktree is the service's again
      throw new SessionStartError(e, worktree, logPath, env);
    }
  }

  /**
   * The memory limit of the agent's container (`memory_mb`) when the kernel's OOM killer ended
   * a process of it; undefined for a host process or a container that never ran out of memory.
   */
  outOfMemoryAt(): number | undefined {
    if (!this.#box?.agent.outOfMemory()) return undefined;
    return this.#start.isolation?.settings.memoryMb ?? 0;
  }

  static async #started(
    start: SessionStart,
    worktree: Worktree,
    proc: AgentProcess,
    env: Record<string, string>,
    prepared: PreparedWorktree | undefined,
    box: SessionContainer | undefined,
    progress: ProgressWatch,
  ): Promise<AgentSession> {
    const isolation = box ? box.label : "worktree";
    const session = new AgentSession(start, worktree, proc, env, prepared, isolation, progress);
    session.#box = box;
    const record: SessionRecord = {
      session_id: start.sessionId,
      pid: proc.pid,
      pgid: proc.pid,
      adapter: start.adapter.name,
      task_id: start.task.id,
      role: start.task.role,
      run_id: start.runId,
      command: [start.launch.command, ...start.launch.prefixArgs, start.adapter.binary],
      log_path: proc.logPath,
      started_at: Math.floor(proc.startedAt / 1000),
      worktree: worktree.path,
      branch: worktree.branch,
      base: worktree.base,
      ...(box ? { container: { runtime: box.runtimeBin, name: box.name } } : {}),
    };
    await writePidFile(start.paths.runtime, record);
    await session.writeHeartbeat();
    return session;
  }

  /** Rewrite the heartbeat file (pid, alive, last output and progress, log bytes). */
  writeHeartbeat(): Promise<string> {
    const p = this.proc;
    const seconds = (ms: number) => Math.floor(ms / 1000);
    const { lastProgressAt, reconnecting } = this.progress.state;
    return writeHeartbeat(this.#start.paths.runtime, {
      session_id: this.sessionId,
      pid: p.pid,
      alive: p.alive,
      last_output_at: p.lastOutputAt === null ? null : seconds(p.lastOutputAt),
      last_progress_at: lastProgressAt === null ? null : seconds(lastProgressAt),
      ...(reconnecting
        ? { reconnecting: { since: seconds(reconnecting.since), message: reconnecting.message } }
        : {}),
      log_bytes: p.outputBytes,
      updated_at: seconds(Date.now()),
    });
  }

  /** SIGTERM the group, wait the grace (the session's, or `graceMs`), SIGKILL; remembers why. */
  async terminate(reason: NonNullable<AgentSession["endedBy"]>, graceMs?: number): Promise<void> {
    this.endedBy ??= reason;
    await this.proc.end(reason, graceMs);
  }

  /** Remove the PID file (the heartbeat file keeps the last state, alive false). */
  async cleanup(): Promise<void> {
    await this.writeHeartbeat().catch(() => {});
    await removePidFile(this.#start.paths.runtime, this.sessionId);
  }
}
