/**
 * The orchestrator loop: schedules agents for ready tasks, watches them (heartbeats, timeouts,
 * rate limits, cost), recovers orphans, lands finished work through its gates, applies review
 * decisions from the journal, and journals every step. It wakes on agent exits, task changes
 * and a one-second tick; `stop()` ends it cleanly.
 */
import { join } from "node:path";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import type { CooldownTracker } from "../agents/cooldown.ts";
import type { CostReport } from "../agents/cost.ts";
import { agentExitCode } from "../agents/exit_status.ts";
import { logTail } from "../agents/process.ts";
import type { PreflightResult } from "../agents/preflight.ts";
import { appendEvents } from "../journal/journal_file.ts";
import * as ev from "../journal/events.ts";
import type { JournalEvent } from "../journal/row.ts";
import { onTaskChange } from "../tasks/changes.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { loadRoleTemplate, type RoleTemplate } from "../roles/templates.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { decideSchedule, describeWait, type WaitReason } from "./schedule.ts";
import { AgentSession, HEARTBEAT_INTERVAL_MS } from "./session.ts";
import { Lander, type LandingNotice } from "./lander.ts";
import { ReviewWatcher } from "./review_watcher.ts";
import { RateLimitGuard } from "./rate_limit_guard.ts";
import {
  recoverInterrupted,
  recoverOrphan,
  type RecoveryContext,
  requeueOrFail,
} from "./recovery.ts";
import { SpendTracker } from "./spend.ts";
import { exitReason } from "./exit_reason.ts";
import { agentInvocation } from "./invocation.ts";

/** How long an agent may keep running after it reported completion. */
export const REPORTED_EXIT_GRACE_MS = 10_000;

/** Attempts (agent runs) a task gets before it is FAILED. */
export const MAX_ATTEMPTS = 3;

/** Everything the loop needs, built by `runPlan`. */
export interface OrchestratorOptions {
  paths: WorkspacePaths;
  runId: string;
  journalPath: string;
  store: TaskStore;
  /** Ids of this run's tasks. */
  taskIds: string[];
  adapter: AgentAdapter;
  launch: PreflightResult["launch"];
  serverUrl: string;
  token?: string;
  targetBranch: string;
  maxAgents: number;
  model?: string;
  effort?: string;
  mcpConfigPath?: string;
  requireApproval: boolean;
  qualityGates: string[];
  cooldowns: CooldownTracker;
  cost: CostReport;
  /** Wall-clock limit of an agent, by task (seconds). */
  timeoutS: (task: Task) => number;
  graceMs: number;
  /** Receives one line per event (the progress display). */
  log: (line: string) => void;
  /** Receives the reasons tasks wait whenever they change (published for `status`). */
  onWaiting?: (reasons: Record<string, string>) => void;
}

/** How the run ended. */
export interface RunOutcome {
  status: "completed" | "failed" | "stopped";
  counts: Record<string, number>;
  /** Tasks that did not land, with why. */
  problems: string[];
}

/** A live agent, for the progress display. */
export interface LiveAgent {
  taskId: string;
  sessionId: string;
  elapsedS: number;
}

/** Runs one plan's tasks to the end. */
export class Orchestrator {
  readonly #o: OrchestratorOptions;
  readonly #sessions = new Map<string, AgentSession>();
  readonly #exited: AgentSession[] = [];
  readonly #retryNotes = new Map<string, string>();
  readonly #templates = new Map<string, RoleTemplate>();
  readonly #lander: Lander;
  readonly #reviews: ReviewWatcher;
  readonly #mine: Set<string>;
  readonly #spend: SpendTracker;
  readonly #rateLimits: RateLimitGuard;
  readonly #recovery: RecoveryContext;
  #waiting = new Map<string, WaitReason>();
  #wake: () => void = () => {};
  #stopping = false;
  #sessionCounter = 0;

  constructor(options: OrchestratorOptions) {
    this.#o = options;
    this.#mine = new Set(options.taskIds);
    this.#lander = new Lander({
      root: options.paths.root,
      runId: options.runId,
      journalPath: options.journalPath,
      store: options.store,
      targetBranch: options.targetBranch,
      qualityGates: options.qualityGates,
      maxAttempts: MAX_ATTEMPTS,
      requireApproval: options.requireApproval,
      notify: (notice) => this.#onLanding(notice),
    });
    this.#reviews = new ReviewWatcher(options.journalPath);
    this.#spend = new SpendTracker(options.paths, options.adapter, options.cost);
    this.#rateLimits = new RateLimitGuard({
      adapter: options.adapter.name,
      cooldowns: options.cooldowns,
      runtimeDir: options.paths.runtime,
      journal: (event) => this.#journal(event),
      log: options.log,
    });
    this.#recovery = {
      store: options.store,
      lander: this.#lander,
      maxAttempts: MAX_ATTEMPTS,
      journal: (event) => this.#journal(event),
      log: options.log,
      retryNotes: this.#retryNotes,
    };
  }

  /** Live agents, for `ps`-like displays. */
  liveAgents(now = Date.now()): LiveAgent[] {
    return [...this.#sessions.values()].map((s) => ({
      taskId: s.task.id,
      sessionId: s.sessionId,
      elapsedS: Math.round((now - s.startedAt) / 1000),
    }));
  }

  /** Why tasks wait: ready ones (slot, cooldown, budget, a dependency's merge) and landings. */
  waitingReasons(): Record<string, string> {
    const reasons: Record<string, string> = {};
    for (const [id, reason] of this.#waiting) reasons[id] = describeWait(reason);
    for (const [id, reason] of this.#lander.pendingReasons()) reasons[id] = reason;
    return reasons;
  }

  /** Ask the loop to end: agents get SIGTERM, the grace, then SIGKILL; their work is kept. */
  stop(): void {
    this.#stopping = true;
    this.#wake();
  }

  async #journal(event: JournalEvent): Promise<void> {
    await appendEvents(this.#o.journalPath, [event]);
  }

  /** Run until every task of the plan has landed or cannot progress, or `stop()`. */
  async run(): Promise<RunOutcome> {
    const unsubscribe = onTaskChange((change) => {
      if (this.#mine.has(change.task.id)) this.#wake();
    });
    const tick = setInterval(() => this.#wake(), 1000);
    const heartbeat = setInterval(() => this.#heartbeatAll(), HEARTBEAT_INTERVAL_MS);
    try {
      await recoverInterrupted(
        this.#recovery,
        this.#tasks().filter((t) => !this.#sessions.has(t.id)),
      );
      for (;;) {
        await this.#reapExited();
        this.#checkDeadlines();
        if (this.#stopping) {
          await this.#stopAll();
          return this.#outcome("stopped");
        }
        await this.#applyReviews();
        await this.#lander.retryPending(this.#sessions.size);
        await this.#schedule();
        this.#publishWaiting();
        if (this.#finished()) {
          const counts = this.#counts();
          return this.#outcome(counts.CLOSED === this.#mine.size ? "completed" : "failed");
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
          if (this.#exited.length > 0 || this.#stopping) resolve();
        });
      }
    } finally {
      clearInterval(tick);
      clearInterval(heartbeat);
      unsubscribe();
    }
  }

  #tasks(): Task[] {
    return this.#o.taskIds.map((id) => this.#o.store.get(id)).filter((t): t is Task =>
      t !== undefined
    );
  }

  #counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const t of this.#tasks()) counts[t.status] = (counts[t.status] ?? 0) + 1;
    return counts;
  }

  #finished(): boolean {
    if (this.#sessions.size > 0 || this.#exited.length > 0 || this.#lander.busy) return false;
    const tasks = this.#tasks();
    if (
      tasks.some((t) => t.status === "DONE" || t.status === "CLAIMED" || t.status === "IN_PROGRESS")
    ) {
      return false;
    }
    if (tasks.some((t) => t.status === "ORPHANED")) return false;
    const open = tasks.filter((t) => t.status === "OPEN");
    if (open.length === 0) return true;
    if (this.#spend.readOnly) return true;
    return false; // open tasks wait for a slot, a cooldown or a merge: keep going
  }

  #outcome(status: RunOutcome["status"]): RunOutcome {
    const problems: string[] = [];
    for (const t of this.#tasks()) {
      if (t.status === "CLOSED") continue;
      problems.push(`${t.id}: ${t.status}${t.summary ? ` — ${t.summary}` : ""}`);
    }
    return { status, counts: this.#counts(), problems };
  }

  #lastWaiting = "{}";

  #publishWaiting(): void {
    const reasons = this.waitingReasons();
    const text = JSON.stringify(reasons);
    if (text === this.#lastWaiting) return;
    this.#lastWaiting = text;
    this.#o.onWaiting?.(reasons);
  }

  // ---- scheduling ---------------------------------------------------------------------------

  async #schedule(): Promise<void> {
    const tasks = this.#tasks();
    this.#updateReadOnly();
    const decision = decideSchedule({
      ready: tasks.filter((t) => t.status === "OPEN" && !this.#sessions.has(t.id)),
      running: [...this.#sessions.values()].map((s) => s.task),
      maxAgents: this.#o.maxAgents,
      pendingMerge: new Set(tasks.filter((t) => t.status === "DONE").map((t) => t.id)),
      cooldownS: this.#rateLimits.remainingS(),
      readOnly: this.#spend.readOnly,
    });
    this.#waiting = decision.waiting;
    for (const id of decision.start) await this.#spawn(this.#o.store.require(id));
  }

  #updateReadOnly(): void {
    const stop = this.#spend.checkBudget();
    if (!stop) return;
    this.#o.log(stop.message);
    const { message: _message, ...data } = stop;
    this.#journal(ev.budgetExceeded(data)).catch((e) =>
      this.#o.log(`journal: ${(e as Error).message}`)
    );
  }

  async #template(role: string): Promise<RoleTemplate> {
    let template = this.#templates.get(role);
    if (!template) {
      template = await loadRoleTemplate(this.#o.paths.root, role);
      this.#templates.set(role, template);
    }
    return template;
  }

  async #spawn(task: Task): Promise<void> {
    const o = this.#o;
    const sessionId = `s-${o.runId.slice(-4)}-${String(++this.#sessionCounter).padStart(3, "0")}-${
      crypto.randomUUID().slice(0, 4)
    }`;
    try {
      await o.store.claim(task.id, sessionId);
    } catch {
      return; // claimed meanwhile through the task API: not ours to run
    }
    const { model, argv } = agentInvocation(o.adapter, await this.#template(task.role), task, {
      model: o.model,
      effort: o.effort,
      mcpConfigPath: o.mcpConfigPath,
      workdir: join(o.paths.worktrees, sessionId),
      retryNote: this.#retryNotes.get(task.id),
    });
    await this.#journal(ev.taskClaimed({
      task_id: task.id,
      session_id: sessionId,
      title: task.title,
      role: task.role,
      attempt: task.attempts,
      model,
      batch_eligible: task.batch_eligible,
    }));
    let session: AgentSession;
    try {
      session = await AgentSession.start({
        paths: o.paths,
        runId: o.runId,
        task,
        sessionId,
        baseCommit: await this.#lander.targetTip(),
        adapter: o.adapter,
        launch: o.launch,
        argv,
        serverUrl: o.serverUrl,
        token: o.token,
        timeoutS: o.timeoutS(task),
        graceMs: o.graceMs,
      });
    } catch (e) {
      const reason = `could not start the agent: ${(e as Error).message}`;
      o.log(`${task.id}: ${reason}`);
      await o.store.orphan(task.id, reason);
      await requeueOrFail(this.#recovery, task, reason);
      return;
    }
    this.#sessions.set(task.id, session);
    await this.#storeHeartbeat(task.id);
    o.log(`${task.id}: agent ${sessionId} started (${task.role}, attempt ${task.attempts})`);
    session.proc.status.then(() => {
      this.#exited.push(session);
      this.#wake();
    });
  }

  // ---- watching -----------------------------------------------------------------------------

  /**
   * Heartbeat the task in the store. A task whose agent already reported (DONE) or that ended
   * meanwhile refuses heartbeats: that is expected, not an error. `store.heartbeat` throws
   * synchronously, so a `.catch()` on its result would not catch it.
   */
  async #storeHeartbeat(taskId: string): Promise<void> {
    try {
      await this.#o.store.heartbeat(taskId);
    } catch { /* no longer CLAIMED or IN_PROGRESS */ }
  }

  async #heartbeatAll(): Promise<void> {
    for (const session of this.#sessions.values()) {
      if (!session.proc.alive) continue;
      await session.writeHeartbeat().catch(() => {});
      await this.#storeHeartbeat(session.task.id);
      await this.#rateLimits.check(session);
    }
  }

  #checkDeadlines(): void {
    const now = Date.now();
    for (const session of this.#sessions.values()) {
      if (!session.proc.alive || session.endedBy) continue;
      const task = this.#o.store.get(session.task.id);
      if (task?.status === "DONE" || task?.status === "CANCELLED") {
        // Reported (or cancelled) but still running: give it 10 s to exit, then end it.
        session.reportedAt ??= now;
        if (now - session.reportedAt >= REPORTED_EXIT_GRACE_MS) session.terminate("reported");
        continue;
      }
      if (now >= session.deadline) {
        this.#o.log(
          `${session.task.id}: agent timeout after ${
            Math.round((now - session.startedAt) / 1000)
          } s`,
        );
        session.terminate("timeout"); // its exit is reaped like any other
      }
    }
  }

  // ---- agent exits --------------------------------------------------------------------------

  async #reapExited(): Promise<void> {
    while (this.#exited.length > 0) {
      const session = this.#exited.shift()!;
      await this.#afterExit(session);
    }
  }

  async #afterExit(session: AgentSession): Promise<void> {
    const o = this.#o;
    const status = await session.proc.status;
    const durationMs = Date.now() - session.startedAt;
    const timedOut = session.endedBy === "timeout";
    const exitCode = agentExitCode({ code: status.code, signal: status.signal ?? null, timedOut });
    await session.cleanup();
    this.#sessions.delete(session.task.id);
    await this.#spend.record(session.task.id, session.sessionId, session.logPath);
    const rateLimited = session.endedBy === "rate_limit" || await this.#rateLimits.check(session);
    await this.#journal(ev.agentExited({
      task_id: session.task.id,
      session_id: session.sessionId,
      exit_code: exitCode,
      duration_ms: durationMs,
      ended_by: session.endedBy,
    }));
    await appendTaskMetric(o.paths, {
      task_id: session.task.id,
      role: session.task.role,
      scope: session.task.scope,
      duration_s: Math.round(durationMs / 1000),
      exit_code: exitCode,
      ts: Math.floor(Date.now() / 1000),
    });
    const task = o.store.require(session.task.id);
    if (task.status === "DONE") {
      await this.#lander.land(task, session.worktree, { summary: task.summary ?? undefined });
      return;
    }
    if (task.status === "CANCELLED" || task.status === "CLOSED" || task.status === "FAILED") {
      await this.#lander.reap(session.worktree, task);
      return;
    }
    const { reason, fastExit } = exitReason({
      exitCode,
      durationMs,
      rateLimited,
      endedBy: session.endedBy,
      logPath: session.logPath,
    });
    if (fastExit) {
      o.log(`${task.id}: log tail:\n  ${(await logTail(session.logPath, 8)).join("\n  ")}`);
    }
    if (task.status === "CLAIMED" || task.status === "IN_PROGRESS") {
      await o.store.orphan(task.id, reason);
    }
    o.log(`${task.id}: ${reason}`);
    if (rateLimited) {
      await this.#lander.reap(session.worktree, task);
      await o.store.requeue(task.id, { reason, countAttempt: false });
      await this.#journal(ev.taskRetried({ task_id: task.id, reason }));
      return;
    }
    await recoverOrphan(this.#recovery, task, session.worktree, reason);
  }

  // ---- reviews and landing ------------------------------------------------------------------

  async #applyReviews(): Promise<void> {
    for (const decision of await this.#reviews.newDecisions()) {
      if (!this.#mine.has(decision.taskId)) continue;
      const task = this.#o.store.get(decision.taskId);
      if (!task || task.status !== "DONE") continue;
      if (decision.decision === "merge") {
        await this.#lander.approveMerge(task);
      } else if (decision.decision === "request_changes") {
        const note = `an operator (${decision.principal}) requested changes${
          decision.note ? `: ${decision.note}` : ""
        }`;
        this.#retryNotes.set(task.id, note);
        await this.#lander.discard(task);
        await this.#o.store.requeue(task.id, { reason: note });
        await this.#journal(ev.taskRetried({ task_id: task.id, reason: note }));
        this.#o.log(`${task.id}: ${note}; new attempt queued`);
      }
    }
  }

  #onLanding(notice: LandingNotice): void {
    if (notice.kind === "retry") this.#retryNotes.set(notice.taskId, notice.note);
    this.#o.log(`${notice.taskId}: ${notice.message}`);
    this.#wake();
  }

  // ---- stop ---------------------------------------------------------------------------------

  async #stopAll(): Promise<void> {
    const sessions = [...this.#sessions.values()];
    if (sessions.length > 0) {
      this.#o.log(
        `stopping ${sessions.length} agent(s): SIGTERM, ${
          this.#o.graceMs / 1000
        } s grace, then SIGKILL`,
      );
    }
    await Promise.all(sessions.map((s) => s.terminate("stop")));
    await Promise.all(sessions.map((s) => s.proc.status));
    for (const session of sessions) {
      await session.cleanup();
      this.#sessions.delete(session.task.id);
      const task = this.#o.store.require(session.task.id);
      if (task.status === "CLAIMED" || task.status === "IN_PROGRESS") {
        await this.#o.store.orphan(task.id, "run stopped");
      }
      // Keep the work on its branch (and a rescue ref); the next run recovers it.
      await this.#lander.commitLeftovers(session.worktree, task, "run stopped");
    }
    this.#exited.length = 0;
  }
}

async function appendTaskMetric(
  paths: WorkspacePaths,
  record: Record<string, unknown>,
): Promise<void> {
  await Deno.mkdir(paths.metrics, { recursive: true });
  await Deno.writeTextFile(join(paths.metrics, "tasks.jsonl"), JSON.stringify(record) + "\n", {
    append: true,
  });
}
