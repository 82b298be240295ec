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
import type { PreflightResult } from "../agents/preflight.ts";
import {
  type PidRecord,
  removePidFile,
  sessionLogPath,
  writeHeartbeat,
  writePidFile,
} from "../agents/runtime_files.ts";
import { createWorktree, type Worktree } from "../worktrees/worktrees.ts";
import type { Task } from "../tasks/task.ts";
import type { WorkspacePaths } from "../workspace.ts";
import type { EndReason } from "./core/state.ts";
import type { ContainerIsolation } from "../container/probe.ts";
import { sessionContainer } from "./session_container.ts";

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
  /** More variables to forward (`agent_env`). */
  agentEnv?: readonly string[];
  /** Variables set on top of the forwarded ones (the adapter's MCP settings, lib/mcp). */
  extraEnv?: Readonly<Record<string, string>>;
  /** Run the agent in a container (DESIGN.md §14; `launch` is then the CLI in the image). */
  isolation?: ContainerIsolation;
  /** The run's MCP configuration file the agent reads (copied into its container). */
  mcpConfigPath?: string;
  /** Where problems that change nothing are reported (default: standard error). */
  warn?: (line: string) => void;
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
  /** Why the orchestrator ended it (timeout, stop, rate limit), when it did. */
  endedBy?: EndReason;
  /** When the loop first saw the task reported (DONE) while the agent still ran. */
  reportedAt?: number;
  /** Log bytes already scanned for rate limits. */
  scannedBytes = 0;
  /** `worktree`, or `container:<runtime>:<image id>` (journaled with the claim). */
  readonly isolation: string;
  #start: SessionStart;

  private constructor(
    start: SessionStart,
    worktree: Worktree,
    proc: AgentProcess,
    isolation: string,
  ) {
    this.#start = start;
    this.isolation = isolation;
    this.task = start.task;
    this.sessionId = start.sessionId;
    this.worktree = worktree;
    this.proc = proc;
    this.startedAt = proc.startedAt;
    this.deadline = this.startedAt + start.timeoutS * 1000;
    this.logPath = proc.logPath;
  }

  /** Cut the worktree, spawn the agent, write its PID file. */
  static async start(start: SessionStart): Promise<AgentSession> {
    const cut = await createWorktree(
      start.paths.root,
      start.sessionId,
      start.startCommit ?? start.baseCommit,
    );
    const worktree = { ...cut, base: start.baseCommit };
    await injectSkills(start.adapter, worktree.path); // spec §7.3: excluded, never staged
    const logPath = sessionLogPath(start.paths.runtime, start.sessionId);
    await Deno.mkdir(join(logPath, ".."), { recursive: true });
    const allowed = agentEnvironment(start.adapter, Deno.env.toObject(), {
      serverUrl: start.serverUrl,
      token: start.token,
      runId: start.runId,
      taskId: start.task.id,
      sessionId: start.sessionId,
    }, { extraNames: start.agentEnv });
    Object.assign(allowed, start.extraEnv ?? {});
    // What the CLI needs to start headless (auth selection, endpoint overrides): lib/agents/launch.ts.
    const headless = await prepareHeadless(start.adapter, allowed, start.paths.runtime);
    const box = start.isolation && await sessionContainer(start, worktree, headless.env, logPath);
    let proc: AgentProcess;
    try {
      proc = spawnAgent({
        command: start.launch.command,
        args: [...start.launch.prefixArgs, ...headless.args, ...start.argv],
        cwd: worktree.path,
        env: box ? box.env : headless.env,
        logPath,
        graceMs: start.graceMs,
        launcher: box ? box.agent : undefined,
      });
    } catch (e) {
      await box?.release(); // its worktree is the service's again
      throw e;
    }
    const session = new AgentSession(start, worktree, proc, box ? box.label : "worktree");
    const record: SessionRecord = {
      session_id: start.sessionId,
      pid: proc.pid,
      pgid: proc.pid,
      adapter: start.adapter.name,
      task_id: start.task.id,
      role: start.task.role,
      run_id: start.runId,
      command: [start.launch.command, ...start.launch.prefixArgs, start.adapter.binary],
      log_path: logPath,
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

  /** Rewrite the heartbeat file (pid, alive, last output time, log bytes). */
  writeHeartbeat(): Promise<string> {
    const p = this.proc;
    return writeHeartbeat(this.#start.paths.runtime, {
      session_id: this.sessionId,
      pid: p.pid,
      alive: p.alive,
      last_output_at: p.lastOutputAt === null ? null : Math.floor(p.lastOutputAt / 1000),
      log_bytes: p.outputBytes,
      updated_at: Math.floor(Date.now() / 1000),
    });
  }

  /** SIGTERM the group, wait the grace, SIGKILL; remembers why. */
  async terminate(reason: NonNullable<AgentSession["endedBy"]>): Promise<void> {
    this.endedBy ??= reason;
    await this.proc.end(reason);
  }

  /** Remove the PID file (the heartbeat file keeps the last state, alive false). */
  async cleanup(): Promise<void> {
    await this.writeHeartbeat().catch(() => {});
    await removePidFile(this.#start.paths.runtime, this.sessionId);
  }
}
