/**
 * The orchestrator loop: schedules agents for ready tasks, watches them (heartbeats, timeouts,
 * rate limits, cost), recovers orphans, lands finished work through its gates, applies review
 * decisions from the journal, and journals every step. It wakes on agent exits, task changes
 * and a one-second tick; `stop()` ends it cleanly.
 */
import { join } from "node:path";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { type CooldownTracker, saveCooldowns } from "../agents/cooldown.ts";
import { addUsage, type CostReport, saveCostReport, wouldExceedBudget } from "../agents/cost.ts";
import { appendCostRecords, costRecords } from "../agents/cost_summary.ts";
import { agentExitCode } from "../agents/exit_status.ts";
import { FAST_EXIT_WINDOW_MS, logTail } from "../agents/process.ts";
import type { PreflightResult } from "../agents/preflight.ts";
import { firstRateLimit, scanLog } from "../agents/rate_limit.ts";
import { appendEvents } from "../journal/journal_file.ts";
import type { JournalEvent } from "../journal/row.ts";
import type { JsonValue } from "../journal/canonical_json.ts";
import { onTaskChange } from "../tasks/changes.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { loadRoleTemplate, renderPrompt, type RoleTemplate } from "../roles/templates.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { decideSchedule, describeWait, type WaitReason } from "./schedule.ts";
import { AgentSession, HEARTBEAT_INTERVAL_MS } from "./session.ts";
import { Lander, type LandingNotice } from "./lander.ts";
import { ReviewWatcher } from "./review_watcher.ts";

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
  #waiting = new Map<string, WaitReason>();
  #wake: () => void = () => {};
  #stopping = false;
  #readOnly = false;
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

  async #journal(type: string, data: Record<string, JsonValue>): Promise<void> {
    await appendEvents(this.#o.journalPath, [{ type, data } as JournalEvent]);
  }

  /** Run until every task of the plan has landed or cannot progress, or `stop()`. */
  async run(): Promise<RunOutcome> {
    const unsubscribe = onTaskChange((change) => {
      if (this.#mine.has(change.task.id)) this.#wake();
    });
    const tick = setInterval(() => this.#wake(), 1000);
    const heartbeat = setInterval(() => this.#heartbeatAll(), HEARTBEAT_INTERVAL_MS);
    try {
      await this.#recoverOrphans();
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
    if (this.#readOnly) return true;
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
    const nowS = Date.now() / 1000;
    this.#updateReadOnly();
    const decision = decideSchedule({
      ready: tasks.filter((t) => t.status === "OPEN" && !this.#sessions.has(t.id)),
      running: [...this.#sessions.values()].map((s) => s.task),
      maxAgents: this.#o.maxAgents,
      pendingMerge: new Set(tasks.filter((t) => t.status === "DONE").map((t) => t.id)),
      cooldownS: this.#o.cooldowns.remaining(this.#o.adapter.name, nowS),
      readOnly: this.#readOnly,
    });
    this.#waiting = decision.waiting;
    for (const id of decision.start) await this.#spawn(this.#o.store.require(id));
  }

  #updateReadOnly(): void {
    const report = this.#o.cost;
    if (this.#readOnly || report.budget_micro_usd === null) return;
    const spentTasks = Object.keys(report.by_task).length;
    const estimate = spentTasks > 0 ? Math.ceil(report.total_micro_usd / spentTasks) : 0;
    if (wouldExceedBudget(report, estimate)) {
      this.#readOnly = true;
      const line = `Budget exceeded, read-only mode: spent ${usd(report.total_micro_usd)} of ${
        usd(report.budget_micro_usd)
      }; no new agents start. Raise budget_usd, use cheaper models (complexity: low) or batch routing.`;
      this.#o.log(line);
      this.#journal("budget_exceeded", {
        total_micro_usd: report.total_micro_usd,
        budget_micro_usd: report.budget_micro_usd,
        estimate_micro_usd: estimate,
      }).catch((e) => this.#o.log(`journal: ${(e as Error).message}`));
    }
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
    let prompt = renderPrompt(await this.#template(task.role), task);
    const note = this.#retryNotes.get(task.id);
    if (note) prompt += `\n\nPREVIOUS ATTEMPT: ${note}\n`;
    const model = o.model ?? (task.complexity === "low" ? o.adapter.cheapestModel : undefined);
    const argv = o.adapter.buildArgv({
      prompt,
      model,
      effort: o.effort,
      complexity: task.complexity,
      mcpConfigPath: o.adapter.acceptsMcpConfig ? o.mcpConfigPath : undefined,
      workdir: join(o.paths.worktrees, sessionId),
    });
    await this.#journal("task_claimed", {
      task_id: task.id,
      session_id: sessionId,
      title: task.title,
      role: task.role,
      attempt: task.attempts,
      ...(model ? { model } : {}),
      ...(task.batch_eligible ? { batch_eligible: true } : {}),
    });
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
      await this.#requeueOrFail(task, reason, true);
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
      await this.#scanForRateLimit(session);
    }
  }

  async #scanForRateLimit(session: AgentSession): Promise<boolean> {
    let text = "";
    try {
      const bytes = await Deno.readFile(session.logPath);
      text = new TextDecoder().decode(bytes.subarray(session.scannedBytes));
      const lastNewline = text.lastIndexOf("\n");
      if (session.proc.alive) text = text.slice(0, lastNewline + 1);
      session.scannedBytes += new TextEncoder().encode(text).length;
    } catch {
      return false;
    }
    const hit = firstRateLimit(scanLog(text));
    if (!hit) return false;
    const nowS = Date.now() / 1000;
    const entry = this.#o.cooldowns.recordHit(this.#o.adapter.name, nowS, {
      rule: hit.rule,
      line: hit.line,
    });
    await saveCooldowns(join(this.#o.paths.runtime, "rate_limits.json"), this.#o.cooldowns, nowS)
      .catch(() => {});
    this.#o.log(
      `RateLimitError: ${this.#o.adapter.name} log of ${session.task.id} matched ${hit.rule}: ${
        hit.line.slice(0, 160)
      } — spawns blocked for ${Math.round(entry.until - nowS)} s`,
    );
    await this.#journal("rate_limited", {
      task_id: session.task.id,
      session_id: session.sessionId,
      adapter: this.#o.adapter.name,
      rule: hit.rule,
      line: hit.line.slice(0, 500),
      until: Math.round(entry.until),
    });
    if (session.proc.alive) await session.terminate("rate_limit");
    else session.endedBy ??= "rate_limit";
    return true;
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
    await this.#recordCost(session);
    const rateLimited = session.endedBy === "rate_limit" || await this.#scanForRateLimit(session);
    await this.#journal("agent_exited", {
      task_id: session.task.id,
      session_id: session.sessionId,
      exit_code: exitCode,
      duration_ms: durationMs,
      ...(session.endedBy ? { ended_by: session.endedBy } : {}),
    });
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
    let reason: string;
    if (rateLimited) reason = "rate limited: the task resumes after the cooldown";
    else if (timedOut) reason = `agent timed out (exit ${exitCode}); partial work kept`;
    else if (session.endedBy === "stop") reason = "run stopped";
    else if (durationMs < FAST_EXIT_WINDOW_MS && exitCode !== 0) {
      const tail = (await logTail(session.logPath, 8)).join("\n  ");
      reason = `SpawnError: agent exited within 2s (exit ${exitCode}); read ${session.logPath}`;
      o.log(`${task.id}: ${reason}\n  ${tail}`);
    } else reason = `agent exited (code ${exitCode}) without reporting completion`;
    if (task.status === "CLAIMED" || task.status === "IN_PROGRESS") {
      await o.store.orphan(task.id, reason);
    }
    o.log(`${task.id}: ${reason}`);
    if (rateLimited) {
      await this.#lander.reap(session.worktree, task);
      await o.store.requeue(task.id, { reason, countAttempt: false });
      await this.#journal("task_retried", { task_id: task.id, reason });
      return;
    }
    await this.#recover(task, session.worktree, reason);
  }

  async #recordCost(session: AgentSession): Promise<void> {
    let text: string;
    try {
      text = await Deno.readTextFile(session.logPath);
    } catch {
      return;
    }
    const usage = this.#o.adapter.parseUsage(text);
    if (!usage) return;
    this.#o.cost = addUsage(this.#o.cost, session.task.id, usage);
    await saveCostReport(join(this.#o.paths.runtime, "cost_report.json"), this.#o.cost);
    await appendCostRecords(
      join(this.#o.paths.metrics, "cost.jsonl"),
      costRecords(usage, {
        ts: Math.floor(Date.now() / 1000),
        taskId: session.task.id,
        adapter: this.#o.adapter.name,
        sessionId: session.sessionId,
      }),
    );
  }

  /** ORPHANED: keep the partial work; merge it when it is mergeable, else requeue or fail. */
  async #recover(task: Task, worktree: AgentSession["worktree"], reason: string): Promise<void> {
    const hasWork = await this.#lander.commitLeftovers(worktree, task, reason);
    if (hasWork) {
      await this.#o.store.recoverDone(task.id);
      this.#o.log(`${task.id}: recovered partial work; landing it through the gates`);
      await this.#lander.land(this.#o.store.require(task.id), worktree, { recovered: true });
      return;
    }
    await this.#lander.reap(worktree, task);
    await this.#requeueOrFail(task, reason, false);
  }

  async #requeueOrFail(task: Task, reason: string, startFailed: boolean): Promise<void> {
    const current = this.#o.store.require(task.id);
    if (current.attempts >= MAX_ATTEMPTS) {
      await this.#o.store.giveUp(task.id, `${reason} (after ${current.attempts} attempts)`);
      await this.#journal("task_failed", { task_id: task.id, reason });
      this.#o.log(`${task.id}: FAILED after ${current.attempts} attempts: ${reason}`);
      return;
    }
    await this.#o.store.requeue(task.id, { reason });
    this.#retryNotes.set(task.id, reason);
    await this.#journal("task_retried", { task_id: task.id, reason });
    if (startFailed) this.#wake();
  }

  /** After a crash of the previous orchestrator: tasks still claimed have no live agent. */
  async #recoverOrphans(): Promise<void> {
    for (const task of this.#tasks()) {
      if (
        task.status !== "CLAIMED" && task.status !== "IN_PROGRESS" && task.status !== "ORPHANED"
      ) continue;
      if (this.#sessions.has(task.id)) continue;
      const sessionId = task.session_id;
      const reason = "its agent was lost when the orchestrator stopped";
      if (task.status !== "ORPHANED") await this.#o.store.orphan(task.id, reason);
      if (!sessionId) {
        await this.#requeueOrFail(task, reason, false);
        continue;
      }
      const worktree = await this.#lander.existingWorktree(sessionId);
      if (!worktree) {
        await this.#requeueOrFail(task, reason, false);
        continue;
      }
      this.#o.log(`${task.id}: recovering session ${sessionId} of the interrupted run`);
      await this.#recover(task, worktree, reason);
    }
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
        await this.#journal("task_retried", { task_id: task.id, reason: note });
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

function usd(micro: number): string {
  return `$${(micro / 1e6).toFixed(2)}`;
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
