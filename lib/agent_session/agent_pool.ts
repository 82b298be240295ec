/**
 * The agents of a run: starting one for a task (claim, prompt, worktree, process), heartbeats
 * and rate-limit scans while it runs, ending it on request, and — when it exits — the I/O that
 * turns its end into an event for the decision core (spend, leftovers, diagnosis).
 */
import { withoutColours } from "../util/printable.ts";
import { mcpSessionEnv } from "../mcp/run_servers.ts";
import { join, relative } from "node:path";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { agentExitCode } from "../agents/exit_status.ts";
import { logTail } from "../agents/process.ts";
import { followUpsNote, readFollowUps } from "../operator/follow_ups.ts";
import { RECONNECT_NOTICE_S, reconnectWords } from "../agents/progress_watch.ts";
import { durationWords } from "../util/duration_words.ts";
import { readSessionUsage } from "../agents/usage_reader.ts";
import type { PreflightResult } from "../agents/preflight.ts";
import type { ContainerIsolation } from "../container/probe.ts";
import type { RoleSettings } from "../config/schema.ts";
import { loadRoleTemplate, type RoleTemplate } from "../roles/templates.ts";
import { ACTIVITY_SINK, nextAttemptNumber } from "../board/activity.ts";
import { IncrementalJournal } from "../journal/incremental.ts";
import { readJournal } from "../journal/journal_file.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { journalPath, runLogPath, type WorkspacePaths } from "../workspace.ts";
import { appendStateLines } from "../util/locked_append.ts";
import type { AgentLaneEvent } from "./events.ts";
import type { EndReason } from "../agents/end_reason.ts";
import { exitReason } from "./exit_reason.ts";
import { highestSessionNumber } from "./session_numbers.ts";
import { agentInvocation } from "./invocation.ts";
import type { RateLimitGuard } from "./rate_limit_guard.ts";
import { AgentSession, sessionEnvironment, SessionStartError } from "./session.ts";
import { diskFullDiagnosis, isDiskFull } from "../util/disk_full.ts";
import { sessionPorts } from "../worktree_env/ports.ts";
import {
  type PreparedWorktree,
  type WorktreeEnvironments,
  WorktreeSetupError,
} from "../worktree_env/environments.ts";
import { SETUP_FAILED } from "../worktree_env/spec.ts";
import type { SpendTracker } from "../cost/budget.ts";
import type { AgentWork } from "./work.ts";
import { startFailure } from "./start_failure.ts";
import { type EarlierWork, earlierWork, supersedeEarlierWork } from "../worktrees/earlier_work.ts";
import {
  agentUrlFor,
  mintAgentCredential,
  revokeAgentCredential,
} from "../auth/agent_credentials.ts";

/** An adapter whose preflight passed: its CLI can start agents. */
export interface ReadyAdapter {
  adapter: AgentAdapter;
  launch: PreflightResult["launch"];
}

/** One spawn of {@link AgentPool.spawn}: what it started from, and what it learnt on the way. */
interface SessionStart {
  task: Task;
  sessionId: string;
  ready: ReadyAdapter;
  note: string | undefined;
  /** The model its invocation chose (known before its agent starts). */
  model?: string;
  /** The kept work of an earlier session it continues. */
  earlier?: EarlierWork;
  /** What its agent was asked (an agent that echoes it is not quoted with its words). */
  prompt?: string;
}

/** Settings of {@link AgentPool}. */
export interface AgentPoolOptions {
  paths: WorkspacePaths;
  runId: string;
  store: TaskStore;
  /**
   * The adapters agents may start with, by name: the configured one, the ones the roles and the
   * plan's steps name, and the ready fallbacks.
   */
  adapters: ReadonlyMap<string, ReadyAdapter>;
  /**
   * Another adapter a task names (`cli` of a task created during the run), checked on first use;
   * throws when it cannot start agents (lib/runner/used_adapters.ts).
   */
  resolveAdapter?: (name: string, taskId: string) => Promise<ReadyAdapter>;
  /** Container isolation (absent: host processes). */
  isolation?: ContainerIsolation;
  /** The task server (local agents get its agents' listener when it has one). */
  serverUrl: string;
  model?: string;
  effort?: string;
  roles: Readonly<Record<string, RoleSettings>>;
  /** `agent_env` at the top level of service.yaml. */
  agentEnv: readonly string[];
  /** The run's environment the agents' allow-list reads from (default: this process's). */
  processEnv?: Readonly<Record<string, string>>;
  mcpConfigPath?: string;
  /** Wall-clock limit of an agent, by task (seconds). */
  timeoutS: (task: Task) => number;
  graceMs: number;
  /** The cap of each agent's log (bytes; default lib/process/capped_log.ts's). */
  logMaxBytes?: number;
  work: AgentWork;
  spend: SpendTracker;
  rateLimits: RateLimitGuard;
  /** `recovery.land_unreported` (see CoreSettings). */
  landUnreported: boolean;
  /** Copies, links, ignores, ports and setup of new worktrees (DESIGN.md §13). */
  environments?: WorktreeEnvironments;
  log: (line: string) => void;
  clock: () => number;
}

/** A live agent, for the progress display and `ps`-like views. */
export interface LiveAgent {
  taskId: string;
  sessionId: string;
  role: string;
  elapsedS: number;
  /** The remote worker it runs on (absent: this machine). */
  worker?: string;
}

/** Starts, watches and ends a run's agents. */
export class AgentPool {
  readonly #o: AgentPoolOptions;
  readonly #sessions = new Map<string, AgentSession>();
  readonly #templates = new Map<string, RoleTemplate>();
  /** The run journal's task activity, read incrementally (attempt numbers, as the board's). */
  readonly #activity = new IncrementalJournal(ACTIVITY_SINK);
  #counter = 0;

  constructor(options: AgentPoolOptions) {
    this.#o = options;
  }

  /** Live agents. */
  live(): LiveAgent[] {
    const now = this.#o.clock();
    return [...this.#sessions.values()].map((s) => ({
      taskId: s.task.id,
      sessionId: s.sessionId,
      role: s.task.role,
      elapsedS: Math.round((now - s.startedAt) / 1000),
    }));
  }

  /** A new session id (a remote worker's session too). */
  newSessionId(): string {
    return this.#sessionId();
  }

  /**
   * Number this process's sessions on from those the run's journal holds (a resumed run): called
   * once, before the first session starts.
   */
  async resumeNumbering(): Promise<void> {
    const path = journalPath(this.#o.paths, this.#o.runId);
    // Only names depend on it (each id has a random part too): a journal that cannot be read
    // here fails where it matters, not here.
    const read = await readJournal(path, this.#activity).catch(() => undefined);
    const ids = [...read?.state.tasks.values() ?? []].flatMap((t) =>
      t.attempts.map((a) => a.session_id)
    );
    this.#counter = Math.max(this.#counter, highestSessionNumber(ids, this.#o.runId.slice(-4)));
  }

  /** A new session id: sortable within the run, unique across runs. */
  #sessionId(): string {
    const n = String(++this.#counter).padStart(3, "0");
    return `s-${this.#o.runId.slice(-4)}-${n}-${crypto.randomUUID().slice(0, 4)}`;
  }

  /** The kept work of the task's interrupted attempt, which this attempt continues. */
  async #earlierWork(task: Task, tip: string): Promise<EarlierWork | undefined> {
    if (!task.resume_from) return undefined;
    const found = await earlierWork(this.#o.paths.root, task.resume_from, tip);
    if (!found) {
      this.#o.log(
        `${task.id}: nothing is left to continue of session ${task.resume_from} ` +
          "(it landed, or its refs were deleted); starting from the target branch",
      );
    }
    return found;
  }

  /** The number of `taskId`'s attempt about to be claimed, from the claims the journal holds. */
  async attemptNumber(taskId: string): Promise<number> {
    const path = journalPath(this.#o.paths, this.#o.runId);
    return nextAttemptNumber((await readJournal(path, this.#activity)).state, taskId);
  }

  /** The role's template, loaded once per run. */
  async template(role: string): Promise<RoleTemplate> {
    let template = this.#templates.get(role);
    if (!template) {
      template = await loadRoleTemplate(this.#o.paths.root, role);
      this.#templates.set(role, template);
    }
    return template;
  }

  /**
   * Claim `taskId` and start its agent with `adapterName`'s CLI. `onExit` receives the exit's
   * events once the process ends. Answers `spawned`, `claim_lost` (claimed meanwhile through the
   * task API) or `spawn_failed`.
   */
  async spawn(
    taskId: string,
    adapterName: string,
    note: string | undefined,
    onExit: (events: () => Promise<AgentLaneEvent[]>) => void,
  ): Promise<AgentLaneEvent> {
    const o = this.#o;
    const ready = o.adapters.get(adapterName) ??
      await o.resolveAdapter?.(adapterName, taskId); // throws why it cannot start
    if (!ready) throw new Error(`adapter ${adapterName} is not ready: it cannot start agents`);
    const sessionId = this.#sessionId();
    try {
      await o.store.claim(taskId, sessionId);
    } catch {
      return { type: "claim_lost", taskId };
    }
    const task = o.store.require(taskId);
    const start: SessionStart = { task, sessionId, ready, note };
    let session: AgentSession;
    try {
      session = await this.#startSession(start);
    } catch (e) {
      return await this.#spawnFailed(start, e);
    }
    return await this.#spawned(start, session, onExit);
  }

  /** Start the session of `start` (its worktree, then its agent), noting its model and earlier work. */
  async #startSession(start: SessionStart): Promise<AgentSession> {
    const o = this.#o;
    const { task, sessionId, ready: { adapter, launch } } = start;
    const role = o.roles[task.role] ?? {};
    const tip = await o.work.targetTip();
    const earlier = start.earlier = await this.#earlierWork(task, tip);
    const invocation = agentInvocation(adapter, await this.template(task.role), task, {
      model: role.model ?? o.model,
      effort: role.effort ?? o.effort,
      mcpConfigPath: o.mcpConfigPath,
      workdir: join(o.paths.worktrees, sessionId),
      retryNote: start.note,
      followUps: followUpsNote(await readFollowUps(o.paths, task.id)),
      earlierWork: earlier && { session: task.resume_from!, base: earlier.base },
      ports: o.environments?.spec(task.role).ports,
    });
    start.model = invocation.model;
    start.prompt = invocation.prompt;
    return await AgentSession.start({
      paths: o.paths,
      runId: o.runId,
      task,
      sessionId,
      baseCommit: earlier?.base ?? tip,
      startCommit: earlier?.commit,
      adapter,
      launch,
      isolation: o.isolation,
      argv: invocation.argv,
      // The agents' listener and a credential of this session only (docs/security.md "Agents").
      serverUrl: agentUrlFor(o.paths.root) ?? o.serverUrl,
      token: mintAgentCredential(o.paths.root, { runId: o.runId, taskId: task.id, sessionId }),
      timeoutS: o.timeoutS(task),
      graceMs: o.graceMs,
      ...(o.logMaxBytes ? { logMaxBytes: o.logMaxBytes } : {}),
      agentEnv: [...o.agentEnv, ...(role.agent_env ?? [])],
      ...(o.processEnv ? { processEnv: o.processEnv } : {}),
      extraEnv: mcpSessionEnv(adapter, o.mcpConfigPath),
      environments: o.environments,
      mcpConfigPath: o.mcpConfigPath,
      warn: o.log,
    });
  }

  /** The `spawn_failed` of a session that did not start: the setup's fault counts an attempt. */
  async #spawnFailed(
    { task, sessionId, ready, model }: SessionStart,
    e: unknown,
  ): Promise<AgentLaneEvent> {
    const o = this.#o;
    const taskId = task.id;
    if (e instanceof SessionStartError) {
      // Its worktree is reaped like any other: teardown, log kept, ports released.
      o.work.set(taskId, {
        worktree: e.worktree,
        sessionId,
        logPath: e.logPath,
        role: task.role,
        env: e.env,
      });
    }
    const err = (e instanceof SessionStartError ? e.cause : e) as Error;
    if (err instanceof WorktreeSetupError) {
      // The environment's fault, not the agent's: the attempt counts, with the claim it made.
      return {
        type: "spawn_failed",
        taskId,
        sessionId,
        diagnosis: { kind: SETUP_FAILED, reason: err.reason, retryable: true },
        attempt: await this.attemptNumber(taskId),
        model,
        adapter: ready.adapter.name,
        prepared: preparedData(err.prepared),
        isolation: o.isolation ? o.isolation.label : "worktree",
      };
    }
    if (isDiskFull(err)) {
      // The service's own step (its worktree, the agent's log, its PID file): no attempt counts.
      const step = e instanceof SessionStartError
        ? "preparing the agent's session"
        : "creating its worktree";
      const where = e instanceof SessionStartError ? e.worktree.path : o.paths.root;
      return {
        type: "spawn_failed",
        taskId,
        sessionId,
        diagnosis: diskFullDiagnosis(step, where, err.message),
      };
    }
    return {
      type: "spawn_failed",
      taskId,
      sessionId,
      diagnosis: { kind: "spawn_failed", ...startFailure(err) },
    };
  }

  /** Keep a started session, watch its exit and answer `spawned`. */
  async #spawned(
    { task, sessionId, ready, model, earlier, prompt }: SessionStart,
    session: AgentSession,
    onExit: (events: () => Promise<AgentLaneEvent[]>) => void,
  ): Promise<AgentLaneEvent> {
    const o = this.#o;
    const taskId = task.id;
    this.#sessions.set(taskId, session);
    o.work.set(taskId, {
      worktree: session.worktree,
      sessionId,
      logPath: session.logPath,
      role: task.role,
      env: session.env,
    });
    if (earlier) {
      o.log(`${taskId}: continuing the kept work of session ${task.resume_from}`);
      await supersedeEarlierWork(o.paths.root, task.resume_from!, earlier.commit);
    }
    await this.#storeHeartbeat(taskId);
    session.proc.status.then(() => onExit(() => this.#exited(session, prompt)));
    return {
      type: "spawned",
      taskId,
      sessionId,
      startedAt: session.startedAt,
      deadline: session.deadline,
      attempt: await this.attemptNumber(taskId),
      counted: task.attempts,
      model,
      batchEligible: task.batch_eligible,
      prepared: session.prepared && preparedData(session.prepared),
      adapter: ready.adapter.name,
      isolation: session.isolation,
    };
  }

  /**
   * The environment an agent of `taskId` in `sessionId` has, with the ports the session still
   * holds: for the teardown of a worktree an earlier process started.
   */
  async environmentFor(taskId: string, sessionId: string): Promise<Record<string, string>> {
    const o = this.#o;
    const task = o.store.get(taskId);
    const role = (task && o.roles[task.role]) ?? {};
    // The configured adapter (first in the map): a worktree an earlier process started.
    const adapter = [...o.adapters.values()][0].adapter;
    return sessionEnvironment({
      adapter,
      // A teardown calls no task API: the session's credential is not handed on.
      serverUrl: agentUrlFor(o.paths.root) ?? o.serverUrl,
      runId: o.runId,
      taskId,
      sessionId,
      agentEnv: [...o.agentEnv, ...(role.agent_env ?? [])],
      ...(o.processEnv ? { processEnv: o.processEnv } : {}),
      extraEnv: mcpSessionEnv(adapter, o.mcpConfigPath),
      ports: await sessionPorts(o.paths.portLeases, sessionId),
    });
  }

  /**
   * Ask `taskId`'s agent to end: SIGTERM, the grace (the session's, or `graceMs`), SIGKILL of its
   * process group. Asked again with `graceMs` 0 while it ends, the SIGKILL is sent at once.
   */
  terminate(taskId: string, reason: EndReason, graceMs?: number): void {
    const session = this.#sessions.get(taskId);
    if (!session) return;
    session.terminate(reason, graceMs).catch((e) =>
      this.#o.log(`${taskId}: could not end the agent: ${(e as Error).message}`)
    );
  }

  /** Every 15 s: heartbeat files, store heartbeats and rate-limit scans of live agents. */
  async heartbeat(): Promise<AgentLaneEvent[]> {
    const hits: AgentLaneEvent[] = [];
    for (const session of this.#sessions.values()) {
      if (!session.proc.alive) continue;
      await session.writeHeartbeat().catch(() => {});
      this.#sayReconnecting(session);
      await this.#storeHeartbeat(session.task.id);
      const hit = await this.#o.rateLimits.check(session);
      if (hit) hits.push(hit);
    }
    return hits;
  }

  /**
   * Say once when an agent has only reconnected to its model for a minute (its endpoint died:
   * it looks alive, writing "Reconnecting…", until its time limit), and once when it recovers.
   */
  #sayReconnecting(session: AgentSession): void {
    const taskId = session.task.id;
    const { reconnecting } = session.progress.state;
    const now = Date.now();
    const forS = reconnecting ? (now - reconnecting.since) / 1000 : 0;
    if (reconnecting && forS >= RECONNECT_NOTICE_S && !session.reconnectSaid) {
      session.reconnectSaid = true;
      const left = durationWords(Math.max(0, (session.deadline - now) / 1000));
      this.#o.log(
        `${taskId}: its agent has made ${reconnectWords({ ...reconnecting, for_s: forS })}; ` +
          `it is ended at its time limit in ${left} unless it recovers ` +
          `(\`service cancel ${taskId}\` ends it now)`,
      );
    } else if (!reconnecting && session.reconnectSaid) {
      session.reconnectSaid = false;
      this.#o.log(`${taskId}: its agent reached its model again and makes progress`);
    }
  }

  /**
   * A task whose agent already reported (DONE) or ended refuses heartbeats: expected, not an
   * error. `store.heartbeat` throws synchronously, so `.catch()` on its result would miss it.
   */
  async #storeHeartbeat(taskId: string): Promise<void> {
    try {
      await this.#o.store.heartbeat(taskId);
    } catch { /* no longer CLAIMED or IN_PROGRESS */ }
  }

  async #exited(session: AgentSession, prompt?: string): Promise<AgentLaneEvent[]> {
    revokeAgentCredential(this.#o.paths.root, session.sessionId);
    const o = this.#o;
    const taskId = session.task.id;
    const status = await session.proc.status;
    // The agent's own run time (spawn to exit), not when this is decided.
    const durationMs = status.durationMs;
    const exitCode = agentExitCode({
      code: status.code,
      signal: status.signal ?? null,
      timedOut: session.endedBy === "timeout",
    });
    await session.cleanup();
    this.#sessions.delete(taskId);
    await readSessionUsage(session.adapter, session.logPath)
      .then((usage) =>
        o.spend.record(taskId, session.sessionId, usage, { adapter: session.adapter.name })
      )
      .catch((e) => o.log(`${taskId}: could not record spend: ${(e as Error).message}`));
    const hit = await o.rateLimits.check(session);
    const rateLimited = session.endedBy === "rate_limit" || hit !== undefined;
    await appendTaskMetric(o.paths, {
      task_id: taskId,
      role: session.task.role,
      scope: session.task.scope,
      duration_s: Math.round(durationMs / 1000),
      exit_code: exitCode,
      ts: Math.floor(o.clock() / 1000),
    }).catch(() => {});
    const tail = await logTail(session.logPath, 20);
    let diagnosis = exitReason({
      exitCode,
      durationMs,
      rateLimited,
      endedBy: session.endedBy,
      // Named where a reader finds it after the worktree is reaped, relative to the workspace.
      logPath: relative(o.paths.root, runLogPath(o.paths, o.runId, session.sessionId)),
      logTail: tail,
      adapter: session.adapter.name,
      outOfMemoryMb: session.outOfMemoryAt(),
      prompt,
    });
    if (diagnosis.fastExit) {
      o.log(`${taskId}: log tail:\n  ${tail.slice(-8).map(withoutColours).join("\n  ")}`);
    }
    const status2 = o.store.get(taskId)?.status;
    const unreported = status2 === "CLAIMED" || status2 === "IN_PROGRESS" ||
      status2 === "ORPHANED";
    // A stopped agent's leftovers are committed when its worktree is kept for the next run.
    const kept = unreported && session.endedBy !== "stop"
      ? await o.work.keepLeftovers(taskId, diagnosis.reason)
      : { hasWork: false };
    const hasWork = kept.hasWork;
    if (kept.diskFull) {
      // The service's own step failed, not the agent: its work is uncommitted, not absent.
      const { said, where } = kept.diskFull;
      diagnosis = {
        ...diskFullDiagnosis("committing the agent's work", where, said),
        fastExit: false,
      };
    }
    const exitedOnItsOwn = !session.endedBy && exitCode === 0;
    // Under `recovery.land_unreported` interrupted work lands only if every signal passes on it.
    const signalsPass = hasWork && o.landUnreported && !exitedOnItsOwn && !rateLimited
      ? await o.work.signalsPass(session.task)
      : undefined;
    const { fastExit: _fastExit, ...d } = diagnosis;
    return [
      ...(hit ? [hit] : []),
      {
        type: "agent_exited",
        taskId,
        sessionId: session.sessionId,
        exitCode,
        durationMs,
        rateLimited,
        hasWork,
        ...(signalsPass === undefined ? {} : { signalsPass }),
        diagnosis: d,
      },
    ];
  }
}

/** What a worktree got, as `task_worktree_prepared` says it; nothing when nothing was asked. */
function preparedData(p: PreparedWorktree) {
  if (!p.configured) return undefined;
  return { copied: p.copied, linked: p.linked, setup: p.setup, ports: p.ports };
}

function appendTaskMetric(paths: WorkspacePaths, record: Record<string, unknown>): Promise<void> {
  return appendStateLines(paths.taskMetrics, JSON.stringify(record) + "\n");
}
