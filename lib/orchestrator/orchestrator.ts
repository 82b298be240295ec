/**
 * The run loop, a thin executor around the pure decision core (core/decide.ts): it turns what
 * happens — agent exits, task changes, review decisions (noticed as the journal grows), the
 * outcome of a landing, ticks — into events, asks the core what follows, and carries out the
 * actions: journal rows, store changes, terminations, log lines. What takes time runs off the
 * loop and comes back as events: agents start a few at a time (those whose worktree runs setup
 * commands beside them) and what their exit left is read as they end; worktree cleanups run by
 * task; diff captures with their verification run side by side, merges and rebases one at a time
 * in the integration lane. Every event is decided when it arrives; once the events that arrived
 * together are decided, the loop settles (starts what may start, says why the rest waits, ends
 * the run when nothing can progress). The tick is for timeouts only. Batch-eligible tasks go to
 * the batch lane (lib/batch/lane.ts), whose polls also arrive as events.
 */
import type { AgentAdapter } from "../agents/adapters/types.ts";
import type { CooldownTracker } from "../agents/cooldown.ts";
import type { CostReport } from "../cost/report.ts";
import type { PreflightResult } from "../agents/preflight.ts";
import type { ContainerIsolation } from "../container/probe.ts";
import { appendEvents } from "../journal/journal_file.ts";
import type { JournalEvent } from "../journal/row.ts";
import { activityHub } from "../events/hub.ts";
import { retainJournalActivity } from "../events/journal_activity.ts";
import { onTaskChange } from "../tasks/changes.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { existsSync } from "node:fs";
import { worktreePath } from "../worktrees/worktrees.ts";
import { keptWithoutWorktree } from "../worktrees/earlier_work.ts";
import { sessionLogPath } from "../agents/runtime_files.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { decide } from "./core/decide.ts";
import { MAX_ATTEMPTS } from "./core/policy.ts";
import type { Action, CoreEvent } from "./core/protocol.ts";
import { type CoreState, initialState, type RunVerdict, type TaskView } from "./core/state.ts";
import {
  AgentPool,
  HEARTBEAT_INTERVAL_MS,
  type LiveAgent,
  RateLimitGuard,
  type ReadyAdapter,
} from "../agent_session/lane.ts";
import type { BatchApi, BatchEndpoint, BatchLane } from "../batch/mod.ts";
import { Bounded } from "../async/bounded.ts";
import { reviewEvent, ReviewWatcher } from "./review_watcher.ts";
import { applyStoreChange } from "./store_change.ts";
import { SpendTracker } from "../cost/budget.ts";
import type { IntegrationLane, TaskWork } from "../integration/mod.ts";
import type { VerificationNudge } from "../verification/nudge_types.ts";
import type { OrchestratorSettings } from "./settings.ts";
import type { PreparedLanding, PullRequestLanding } from "../landing/mod.ts";
import { WorktreeEnvironments } from "../worktree_env/environments.ts";
import { openDesk, type RemoteWork, sweepRunRemote, type TicketBook } from "../workers/lane.ts";
import { AdapterNotReadyError } from "./adapter_not_ready.ts";
import { Launcher, type LaunchTask, type PreparedCluster } from "../kubernetes/mod.ts";
import { openRunProbe } from "../metrics/run_probe.ts";
import { runGauges } from "./core/gauges.ts";
import * as lanes from "./wiring.ts";
import type { LoopHooks } from "./wiring.ts";
import { holdsForReview } from "./core/judged.ts";

export { MAX_ATTEMPTS };
export type { LiveAgent };

/** How long an agent may keep running after it reported completion. */
const REPORTED_EXIT_GRACE_MS = 10_000;

/** How often the clock is decided (deadlines, merge retries, a cooldown running out). */
const TICK_MS = 1000;

/** Everything the loop needs, built by `runPlan`: its settings and the run's parts. */
export interface OrchestratorOptions extends Omit<OrchestratorSettings, "rateLimitCooldownS"> {
  paths: WorkspacePaths;
  runId: string;
  journalPath: string;
  store: TaskStore;
  /**
   * The store's claim mark (`TaskStore.claimMark`) from before this run's process could hand
   * out any task: recovery takes only tasks claimed before it as left by an earlier process; a
   * task claimed since is a live claimant's (the heartbeat monitor watches it).
   */
  claimsBefore?: number;
  /** Ids of this run's tasks. */
  taskIds: string[];
  /** The plan file the run was started with (a protected path, DESIGN.md §18). */
  planFile?: string;
  adapter: AgentAdapter;
  launch: PreflightResult["launch"];
  /** Container isolation, as probed before `run_started` (absent: host processes). */
  isolation?: ContainerIsolation;
  /** Fallback adapters whose preflight passed (`fallback_adapters`). */
  fallbacks?: readonly ReadyAdapter[];
  /** Another adapter a task names, checked on first use (lib/runner/used_adapters.ts). */
  resolveAdapter?: (name: string, taskId: string) => Promise<ReadyAdapter>;
  /** By role, the adapters a task may start with (see `CoreSettings.chains`). */
  chains?: Readonly<Record<string, readonly string[]>>;
  /** The configured adapter's batch endpoint, when its provider has one and its key is set. */
  batchEndpoint?: BatchEndpoint;
  /** The batch API's client (tests hand in their own; default: the provider's). */
  batchApi?: (endpoint: BatchEndpoint) => BatchApi;
  serverUrl: string;
  targetBranch: string;
  mcpConfigPath?: string;
  /** Told once, the moment the verification alert first trips. */
  onAlert?: (nudge: VerificationNudge) => void;
  cooldowns: CooldownTracker;
  cost: CostReport;
  /** Keep running when every task is finished; adopt tasks created meanwhile. */
  continuous?: boolean;
  /** Receives one line per event (the progress display). */
  log: (line: string) => void;
  /** Receives the reasons tasks wait whenever they change (published for `status`). */
  onWaiting?: (reasons: Record<string, string>) => void;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
  /** Interval of the tick (default {@link TICK_MS}; tests stretch it to show nothing waits on it). */
  tickMs?: number;
  /**
   * Land through pull requests (DESIGN.md §12; lib/landing/setup.ts made it ready): then
   * `targetBranch` is the base's remote-tracking ref.
   */
  landing?: PreparedLanding;
  /** Kubernetes Jobs as workers (DESIGN.md §17; lib/kubernetes/mod.ts made it ready). */
  kubernetes?: PreparedCluster;
}

/** How the run ended. */
export interface RunOutcome extends RunVerdict {
  counts: Record<string, number>;
}

/** The decision core's settings of a run's options. */
function coreSettings(options: OrchestratorOptions): Parameters<typeof initialState>[0] {
  const roleMaxAgents: Record<string, number> = {};
  for (const [role, s] of Object.entries(options.roles)) {
    if (s.max_agents !== undefined) roleMaxAgents[role] = s.max_agents;
  }
  return {
    maxAgents: options.maxAgents,
    roleMaxAgents,
    maxAttempts: MAX_ATTEMPTS,
    requireApproval: options.requireApproval,
    enforceOwnedFiles: options.enforceOwnedFiles,
    continuous: options.continuous ?? false,
    reportedExitGraceMs: REPORTED_EXIT_GRACE_MS,
    // A pull request's host tells of changes (poller, webhooks); the clock is a safety net.
    mergeRetryMs: options.landing ? options.landing.settings.retryMs : 3000,
    ...(options.stuckMergeWaitMs !== undefined
      ? { stuckMergeWaitMs: options.stuckMergeWaitMs }
      : {}),
    maxRebases: 3,
    landUnreported: options.landUnreported,
    ...(options.landing ? { onCiFailure: options.landing.settings.onCiFailure } : {}),
    adapter: options.adapter.name,
    chains: options.chains ?? {},
    heartbeatTimeoutS: options.heartbeatTimeoutS ?? 45,
  };
}

/** Something the loop will decide on: an event, or I/O that yields events when awaited. */
type Pending = CoreEvent | (() => Promise<CoreEvent[]>);

/** Runs one plan's tasks to the end. */
export class Orchestrator {
  readonly #o: OrchestratorOptions;
  readonly #clock: () => number;
  readonly #ids: Set<string>;
  readonly #queue: Pending[] = [];
  readonly #work: TaskWork;
  readonly #agents: AgentPool;
  readonly #spend: SpendTracker;
  readonly #rateLimits: RateLimitGuard;
  readonly #reviews: ReviewWatcher;
  readonly #environments: WorktreeEnvironments;
  readonly #batch: BatchLane;
  /** Tasks on remote workers (DESIGN.md §16), and the desk their routes call. */
  readonly #remote: RemoteWork;
  /** The claim tickets of the run's Jobs, and the launcher that creates them (DESIGN.md §17). */
  readonly #tickets: TicketBook | undefined;
  readonly #launcher: Launcher | undefined;
  /** The launcher's requests for tasks to reserve, waiting for the core's answer. */
  readonly #reservations = new Map<string, (tasks: { taskId: string }[]) => void>();
  /** The adapter of each session this process started (the log reader of its completion). */
  readonly #sessionAdapters = new Map<string, string>();
  #state: CoreState;
  #wake: () => void = () => {};
  /** Events were decided since the last settle. */
  #unsettled = false;
  /** When the loop last decided a tick (`/healthz`: a loop that stops ticking is stuck). */
  #tickedAt = 0;
  /** A look at the journal for review decisions is queued. */
  #reviewsQueued = false;
  readonly #lane: IntegrationLane<CoreEvent>;
  readonly #landing: PullRequestLanding | undefined;
  /** Agents being started (a few at a time: each cuts a worktree and forks a process). */
  readonly #starts = new Bounded(navigator.hardwareConcurrency);
  /** The run's rows put in line so far: resolves once they are durable. */
  #written: Promise<unknown> = Promise.resolve();
  /** Reaps and keeps under way off the loop, by task (a new attempt starts after its reap). */
  readonly #cleanups = new Map<string, Promise<void>>();
  /** Worktree cleanups run a few at a time: nothing waits on them but a retry of their task. */
  readonly #cleaning = new Bounded(navigator.hardwareConcurrency);

  constructor(options: OrchestratorOptions) {
    this.#o = options;
    this.#clock = options.clock ?? Date.now;
    this.#ids = new Set(options.taskIds);
    this.#state = initialState(coreSettings(options), this.#clock());
    const hooks: LoopHooks = { push: (item) => this.#push(item), clock: this.#clock };
    const environments = this.#environments = lanes.worktreeEnvironments(options);
    const work = this.#work = lanes.taskWork(options, {
      environments,
      sessionAdapter: (sessionId) => this.#sessionAdapters.get(sessionId) ?? options.adapter.name,
      landing: () => this.#landing,
      agentEnv: (taskId, sessionId) => this.#agents.environmentFor(taskId, sessionId),
    });
    this.#landing = lanes.landing(options, work, hooks);
    this.#lane = lanes.integrationLane(options, work, hooks);
    const spend = this.#spend = lanes.spendTracker(options);
    const rateLimits = this.#rateLimits = lanes.rateLimitGuard(options, hooks);
    const parts = { environments, work, spend };
    const agents = this.#agents = lanes.agentPool(options, { ...parts, rateLimits }, hooks);
    this.#reviews = new ReviewWatcher(options.journalPath);
    const tickets = this.#tickets = lanes.ticketBook(options, hooks);
    this.#launcher = options.kubernetes && lanes.kubernetesLauncher(options, {
      cluster: options.kubernetes,
      tickets: tickets!,
      agents,
      tasks: () => this.#launchTasks(),
      reserve: (free) => this.#reserve(free),
      lost: (sessionId, reason) => this.#push(() => this.#remote.lost(sessionId, reason)),
    }, hooks);
    this.#remote = lanes.remoteWork(options, { ...parts, agents, tickets }, hooks);
    this.#batch = lanes.batchLane(options, { ...parts, agents }, hooks);
  }

  /** The run's tasks now, for the launcher of its Jobs. */
  #launchTasks(): Map<string, LaunchTask> {
    const tasks = new Map<string, LaunchTask>();
    for (const id of this.#ids) {
      const t = this.#o.store.get(id);
      if (t) tasks.set(id, t);
    }
    return tasks;
  }

  /** The launcher asks the core, as a worker does, for up to `free` tasks to reserve. */
  #reserve(free: number): Promise<{ taskId: string }[]> {
    return new Promise((resolve) => {
      const requestId = crypto.randomUUID();
      this.#reservations.set(requestId, resolve);
      this.#push({ type: "worker_asks", requestId, worker: "kubernetes", free, reserve: true });
    });
  }

  /** Live agents, for `ps`-like displays: this machine's, then the remote workers'. */
  liveAgents(): LiveAgent[] {
    const now = this.#clock();
    return [
      ...this.#agents.live(),
      ...this.#remote.live().map((r) => ({
        taskId: r.taskId,
        sessionId: r.sessionId,
        role: this.#o.store.get(r.taskId)?.role ?? "?",
        elapsedS: Math.round((now - r.startedAt) / 1000),
        worker: r.worker,
      })),
    ];
  }

  /** Why tasks wait: a slot, a cooldown, the budget, a dependency, a merge, a review. */
  waitingReasons(): Record<string, string> {
    return Object.fromEntries(this.#state.waits);
  }

  /**
   * Ask the loop to end: agents get SIGTERM, the grace, then SIGKILL; their work is kept. `now`
   * (a second Ctrl-C): the agents still ending get SIGKILL without waiting out the grace.
   */
  stop(options: { now?: boolean } = {}): void {
    this.#push(options.now ? { type: "stop", now: true } : { type: "stop" });
  }

  /**
   * Make `ids` tasks of this run (a continuous run adopting tasks created before its loop
   * subscribed to task changes, lib/trackers/service_run.ts); ids it has already are skipped.
   */
  adopt(ids: string[]): void {
    for (const id of ids) this.#join(id);
    this.#push({ type: "tick" });
  }

  // An adopted task becomes the run's in the store too, before the loop decides anything on it
  // (joinRun leaves a task that already belongs to a run as it is, unless `reclaim`). It joins
  // the loop's tasks only then: an item queued before this one (a tick) would otherwise claim it
  // while the store had it in no run, and its claim's consequences (a ticket's move) lost it.
  #join(id: string, reclaim = false): void {
    this.#push(async () => {
      await this.#o.store.joinRun(id, this.#o.runId, reclaim);
      this.#ids.add(id);
      return [];
    });
  }

  /** Ids of the run's tasks (a continuous run's grow as it adopts new ones). */
  taskIds(): string[] {
    return [...this.#ids];
  }

  #push(item: Pending): void {
    this.#queue.push(item);
    this.#wake();
  }

  /** Run until every task of the run has landed or cannot progress, or `stop()`. */
  async run(): Promise<RunOutcome> {
    // Recovery is the loop's first item, queued before this yields: no tick, settle or task a
    // continuous run adopts meanwhile is decided on before the earlier process's tasks are
    // recovered (a settle first took a stopped task for a stray claimant's and counted an
    // attempt; a ticket's task spawned first was then taken for a lost agent). It reads the
    // review decisions first: before any notice of the journal is acted on.
    this.#push(async () => {
      await this.#landing?.start(); // the journal's pull requests are continued, not opened again
      await this.#agents.resumeNumbering(); // a resumed run's sessions number on
      return await this.#recoveryEvents();
    });
    this.#push({ type: "tick" });
    const unsubscribe = onTaskChange((change) => {
      const id = change.task.id;
      if (!this.#ids.has(id)) {
        if (!this.#o.continuous) return;
        // A task created meanwhile joins a continuous run; so does a ticket's task that its
        // reopened ticket brought back after its own run ended (lib/trackers/sink.ts).
        const reopened = change.task.source !== undefined && change.to === "OPEN" &&
          (change.from === "CANCELLED" || change.from === "FAILED");
        if (change.from !== null && !reopened) return;
        this.#join(id, reopened);
      }
      this.#push({ type: "task_changed", taskId: id, from: change.from, to: change.to });
    });
    // Review decisions are appended by the board (this process's or another's): a grown journal
    // is a notice to read them (lib/events: a file watch, with a stat poll behind it).
    const releaseJournalWatch = retainJournalActivity(this.#o.paths.runs);
    await this.#tickets?.load(); // the tickets of Jobs an earlier process created still claim
    const closeDesk = openDesk(this.#o.paths.root, this.#remote);
    // `/metrics` and `/healthz` read the loop's state in memory (lib/metrics/run_probe.ts).
    this.#tickedAt = this.#clock();
    const roles = Object.keys(this.#o.roles);
    const closeProbe = openRunProbe(this.#o.paths.root, {
      gauges: () => runGauges(this.#state, this.#o.runId, roles),
      lastTick: () => this.#tickedAt,
      tickMs: this.#o.tickMs ?? TICK_MS,
    });
    this.#launcher?.start();
    const unwatch = activityHub.subscribe((activity) => {
      if (activity.kind !== "journal_appended" || activity.detail.run_id !== this.#o.runId) return;
      if (this.#reviewsQueued) return;
      this.#reviewsQueued = true;
      this.#push(() => this.#reviewEvents());
    });
    const tick = setInterval(() => {
      if (!this.#queue.some((p) => typeof p !== "function" && p.type === "tick")) {
        this.#push({ type: "tick" });
      }
      for (const lost of this.#remote.expired()) {
        this.#push(() => this.#remote.lost(lost.sessionId, lost.reason));
      }
    }, this.#o.tickMs ?? TICK_MS);
    const heartbeat = setInterval(
      () =>
        this.#push(async () => {
          await this.#batch.heartbeat();
          return await this.#agents.heartbeat();
        }),
      HEARTBEAT_INTERVAL_MS,
    );
    try {
      while (!this.#state.verdict) {
        if (this.#unsettled && this.#queue.length === 0) {
          this.#unsettled = false;
          await this.#decide({ type: "settle" });
          continue;
        }
        const item = await this.#next();
        const events = typeof item === "function" ? await item() : [item];
        for (const event of events) {
          await this.#decide(event);
          if (event.type !== "tick" && event.type !== "settle") this.#unsettled = true;
        }
      }
      await this.#written; // every row of the run is durable before it ends
      await this.#lane.idle();
      await Promise.all(this.#cleanups.values());
      if (this.#state.verdict.status !== "stopped") await this.#sweepRemote();
      return { ...this.#state.verdict, counts: this.#counts() };
    } catch (e) {
      // The loop failed (a row the journal refused): nothing would end its agents now but their
      // timeouts. They are asked to end as a stop asks; their work stays in their worktrees.
      for (const agent of this.#agents.live()) this.#agents.terminate(agent.taskId, "stop");
      throw e;
    } finally {
      closeDesk();
      // The launcher asks for no task once told to stop; a pass that asked before (the loop has
      // ended: nothing answers it now) gets nothing, or stopping would wait for it forever.
      const launcherStopped = this.#launcher?.stop();
      for (const answer of this.#reservations.values()) answer([]);
      this.#reservations.clear();
      await launcherStopped;
      closeProbe();
      this.#remote.close();
      await this.#batch.close();
      clearInterval(tick);
      clearInterval(heartbeat);
      await this.#landing?.stop();
      unsubscribe();
      unwatch();
      await releaseJournalWatch();
    }
  }

  /** A finished run's base and its sessions' branches leave the remote (lib/workers/remote_sweep.ts). */
  async #sweepRemote(): Promise<void> {
    const landing = this.#o.landing?.settings;
    const removed = await sweepRunRemote({
      remote: { root: this.#o.paths.root, remote: this.#o.remote ?? "origin" },
      runId: this.#o.runId,
      journalPath: this.#o.journalPath,
      keepBranches: landing ? !landing.deleteBranch : false,
      pullRequests: landing !== undefined,
    }).catch(() => []);
    if (removed.length > 0) {
      this.#o.log(
        `removed from ${this.#o.remote ?? "origin"}: ${removed.length} ref(s) of this run ` +
          `(its published base and its sessions' agent branches)`,
      );
    }
  }

  /** Review decisions appended since the last look, and merges decided before this process. */
  async #reviewEvents(): Promise<CoreEvent[]> {
    this.#reviewsQueued = false;
    return (await this.#reviews.newDecisions()).flatMap((d) =>
      this.#ids.has(d.taskId) ? [reviewEvent(d)] : []
    );
  }

  /** Merges decided before this process started, once their task waits for review again. */
  #decidedBeforeEvents(): CoreEvent[] {
    const inReview = (id: string) => this.#state.landings.get(id)?.stage === "review";
    return this.#reviews.decidedBefore(inReview).filter((d) => this.#ids.has(d.taskId))
      .map(reviewEvent);
  }

  async #next(): Promise<Pending> {
    while (this.#queue.length === 0) {
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    return this.#queue.shift()!;
  }

  async #decide(event: CoreEvent): Promise<void> {
    if (event.type === "tick") this.#tickedAt = this.#clock();
    const step = decide(this.#refresh(), event);
    this.#state = step.state;
    let rows: JournalEvent[] = [];
    for (const action of step.actions) {
      if (action.kind === "journal") {
        rows.push(action.event);
        continue;
      }
      this.#append(rows);
      rows = [];
      await this.#execute(action);
    }
    this.#append(rows);
    // A remote attempt's worker hears of it once its claim row is durable.
    if (event.type === "spawned" && event.worker) {
      const sessionId = event.sessionId;
      this.#afterRows(() => this.#remote.recorded(sessionId));
    }
    // Outcomes of this step's actions are decided before anything that happened meanwhile.
    this.#queue.unshift(...this.#decidedBeforeEvents());
  }

  /**
   * Put `rows` in line behind the run's earlier rows now, and go on deciding while they are
   * written: what follows them waits for them (see {@link #afterRows}, the `store` action). A
   * row that cannot be written fails the run, and no later row of it is written.
   */
  #append(rows: JournalEvent[]): void {
    if (rows.length === 0) return;
    const written = appendEvents(this.#o.journalPath, rows, { after: this.#written });
    written.catch((e) => {
      if (this.#written !== written) return; // a later append carries the same failure
      this.#queue.unshift(() => Promise.reject(e));
      this.#wake();
    });
    this.#written = written;
  }

  /** Do `effect` once the rows decided before it are durable (never, if one was not written). */
  #afterRows(effect: () => void): void {
    this.#written.then(effect, () => {});
  }

  /** The core's state with the store's view of the run's tasks and the clock, cooldown, budget. */
  #refresh(): CoreState {
    const tasks = new Map<string, TaskView>();
    for (const id of this.#ids) {
      const t = this.#o.store.get(id);
      if (!t) continue;
      tasks.set(id, {
        id,
        status: t.status,
        title: t.title,
        role: t.role,
        priority: t.priority,
        seq: t.seq,
        owned_files: t.owned_files,
        depends_on: t.depends_on,
        attempts: t.attempts,
        summary: t.summary,
        operatorDone: t.operator_done === true,
        ...(t.resume_from ? { resumeFrom: t.resume_from } : {}),
        ...(t.status === "OPEN" && this.#batch.routes(t) ? { batch: true } : {}),
        ...(t.cli ? { cli: t.cli } : {}),
      });
    }
    const stop = this.#spend.checkBudget() ?? this.#spend.budgetStop;
    return {
      ...this.#state,
      now: this.#clock(),
      tasks,
      parked: this.#rateLimits.parked(),
      readOnly: this.#spend.readOnly,
      budget: stop,
    };
  }

  async #execute(action: Action): Promise<void> {
    const o = this.#o;
    switch (action.kind) {
      case "store":
        // The journal says it first: a store change waits for the rows decided before it.
        await this.#written;
        await applyStoreChange(o.store, action.change).catch((e) =>
          // The task moved meanwhile (an operator acted): the next decision sees where it is. A
          // merge is in the journal already: the next run closes its task from there.
          o.log(
            action.change.op === "merged"
              ? `${action.change.taskId}: merged, but the task store could not record it: ` +
                `${(e as Error).message} (the next \`service run\` closes it from the journal)`
              : `${action.change.taskId}: ${action.change.op} not applied: ${(e as Error).message}`,
          )
        );
        return;
      case "spawn":
        return this.#afterRows(() => this.#spawn(action.taskId, action.adapter, action.note));
      case "batch":
        // Off the loop: its outcomes arrive as events.
        return this.#afterRows(() => this.#batch.submit(action.taskIds));
      case "terminate":
        return this.#afterRows(() => {
          if (this.#batch.has(action.taskId)) this.#batch.drop(action.taskId);
          else if (this.#remote.has(action.taskId)) this.#remote.end(action.taskId, action.reason);
          else this.#agents.terminate(action.taskId, action.reason, action.now ? 0 : undefined);
        });
      case "dispatch":
        if (action.reserve) return this.#reserved(action);
        // Off the loop (a push of the base may take a moment): its claims arrive as events.
        return this.#afterRows(() => {
          void this.#remote.dispatch(action).then(
            (events) => {
              for (const e of events) {
                if (e.type === "spawned") this.#sessionAdapters.set(e.sessionId, e.adapter);
                this.#push(e);
              }
            },
            (e) => this.#push(() => Promise.reject(e)),
          );
        });
      case "remote_lost":
        return this.#afterRows(() =>
          this.#push(() => this.#remote.lost(action.sessionId, action.reason))
        );
      case "capture":
        return this.#afterRows(() =>
          this.#lane.verify(async () => {
            await this.#work.capture(action.taskId);
            const task = o.store.get(action.taskId);
            // What the captured diff touches (DESIGN.md §18), judged before its gates run.
            const judged = task && await this.#work.judge(task);
            const { gatesFailed } = await this.#work.verify(action.taskId);
            const refused = judged !== undefined && o.enforceOwnedFiles &&
              judged.outsideOwned.length > 0;
            const guarded = judged !== undefined && holdsForReview(judged);
            if (this.#landing && (o.requireApproval || guarded) && !gatesFailed && !refused) {
              // Its pull request opens now, so the host's checks and reviewers start while the
              // operator decides; only the board's merge lets it merge (what it says is journaled).
              if (task) await this.#landing.advance(task, false);
            }
            return [{
              type: "captured",
              taskId: action.taskId,
              gatesFailed,
              ...(judged ? { judged } : {}),
            }];
          })
        );
      case "merge":
        return this.#afterRows(() => this.#lane.merge(action.taskId));
      case "rebase":
        return this.#afterRows(() =>
          this.#lane.rebase(async () => [{
            type: "rebase_result",
            taskId: action.taskId,
            result: await this.#work.rebase(action.taskId),
          }])
        );
      case "reap":
        return this.#afterRows(() =>
          this.#cleanUp(action.taskId, () => this.#work.reap(action.taskId, action.reason))
        );
      case "keep":
        return this.#afterRows(() =>
          this.#cleanUp(action.taskId, () => this.#work.keep(action.taskId, action.reason))
        );
      case "log":
        o.log(action.line);
        return;
      case "publish_waits":
        o.onWaiting?.(action.waits);
        return;
      case "finish":
      case "journal":
        return; // the verdict is in the state; journal rows are put in line in order above
    }
  }

  /** The core reserved `action.tasks` for the launcher's Jobs: it creates them. */
  #reserved(action: Extract<Action, { kind: "dispatch" }>): void {
    const answer = this.#reservations.get(action.requestId);
    this.#reservations.delete(action.requestId);
    if (answer) return answer(action.tasks);
    // The launcher stopped meanwhile: no Job will claim them.
    for (const t of action.tasks) {
      this.#push({ type: "launch_lapsed", taskId: t.taskId, reason: "the launcher stopped" });
    }
  }

  /** True when `taskId`'s worktree runs setup commands before its agent (DESIGN.md §13). */
  #setsUp(taskId: string): boolean {
    const task = this.#o.store.get(taskId);
    return task !== undefined && this.#environments.spec(task.role).setup.length > 0;
  }

  /**
   * Start `taskId`'s agent with `adapter` off the loop (claim, worktree, process: tens of
   * milliseconds), a few at a time; a start whose worktree runs setup commands (`npm ci` may take
   * minutes) runs beside them. Its outcome, then its exit, become events in that order.
   */
  #spawn(taskId: string, adapter: string, note: string | undefined): void {
    const start = async (): Promise<CoreEvent> => {
      await this.#cleanups.get(taskId); // the last attempt's work is on its rescue ref first
      const event = await this.#agents.spawn(taskId, adapter, note, (exit) => {
        // What the exit left (spend, leftovers, diagnosis) is read off the loop as well.
        void started.then(exit).then(
          (events) => events.forEach((event) => this.#push(event)),
          (e) => this.#push(() => Promise.reject(e)), // the loop fails as it would have
        );
      });
      if (event.type === "spawned") this.#sessionAdapters.set(event.sessionId, adapter);
      return event;
    };
    const started: Promise<CoreEvent> = (
      this.#setsUp(taskId) ? start() : this.#starts.run(start)
    ).catch((e) => ({
      type: "spawn_failed",
      taskId,
      sessionId: "",
      diagnosis: {
        kind: "spawn_failed",
        reason: `could not start the agent: ${(e as Error).message}`,
        // An adapter that cannot start agents fails the same way every time.
        retryable: !(e instanceof AdapterNotReadyError),
      },
    }));
    void started.then((event) => this.#push(event));
  }

  /** Reap or keep `taskId`'s worktree off the loop, after any earlier cleanup of it. */
  #cleanUp(taskId: string, work: () => Promise<void>): void {
    const done = (this.#cleanups.get(taskId) ?? Promise.resolve())
      .then(() => this.#cleaning.run(work))
      .catch((e) => this.#o.log(`${taskId}: worktree cleanup failed: ${(e as Error).message}`))
      .finally(() => {
        if (this.#cleanups.get(taskId) === done) this.#cleanups.delete(taskId);
      });
    this.#cleanups.set(taskId, done);
  }

  /** Events for tasks an earlier process left claimed, orphaned or done (a stop or a crash). */
  async #recoveryEvents(): Promise<CoreEvent[]> {
    // Before recovery appends anything: which merges did operators decide that never landed?
    await this.#reviews.start();
    await this.#reclaimPorts();
    // Batches submitted before the stop are polled again; their tasks are not recovered here.
    await this.#batch.start();
    const batchEvents = (await this.#batch.adopt()).filter((e) => this.#ids.has(e.taskId));
    const adopted = new Set(batchEvents.map((e) => e.taskId));
    const events: CoreEvent[] = [...batchEvents];
    for (const id of this.#ids) {
      const task = this.#o.store.get(id);
      if (!task || adopted.has(id)) continue;
      if (!["CLAIMED", "IN_PROGRESS", "ORPHANED", "DONE"].includes(task.status)) continue;
      const mark = this.#o.claimsBefore;
      if (mark !== undefined && this.#o.store.claimedSince(id, mark)) continue; // a live claim
      const remote = this.#remoteRecovery(task);
      if (remote) {
        events.push(remote);
        continue;
      }
      const logPath = sessionLogPath(this.#o.paths.runtime, task.session_id ?? "none");
      const handle = await this.#work.adopt(task, logPath);
      const hasWork = handle !== undefined && task.status !== "DONE"
        ? await this.#work.commitLeftovers(id, "kept when the orchestrator stopped")
        // Its worktree removed by hand: what the stop committed is still on its branch.
        : task.status !== "DONE" && !!task.session_id &&
          await keptWithoutWorktree(
            this.#o.paths.root,
            task.session_id,
            () => this.#work.targetTip(),
          );
      const signalsPass = hasWork && handle !== undefined && this.#o.landUnreported
        ? await this.#work.signalsPass(task)
        : undefined;
      events.push({
        type: "recovered",
        taskId: id,
        ...(task.session_id ? { sessionId: task.session_id } : {}),
        hasWorktree: handle !== undefined,
        hasWork,
        ...(signalsPass === undefined ? {} : { signalsPass }),
      });
    }
    return events;
  }

  /**
   * A task an earlier process handed to a remote worker that still holds it (CLAIMED or
   * IN_PROGRESS with its lease, or DONE with its report to come): its session goes on there.
   */
  #remoteRecovery(task: Task): CoreEvent | undefined {
    if (!task.worker || !task.session_id) return undefined;
    const active = task.status === "CLAIMED" || task.status === "IN_PROGRESS";
    const awaitsReport = task.status === "DONE" &&
      !existsSync(worktreePath(this.#o.paths.root, task.session_id));
    if (!active && !awaitsReport) return undefined;
    return this.#remote.adopt(task, undefined);
  }

  /** Take back the port leases of sessions whose orchestrator is gone (killed, DESIGN.md §13). */
  async #reclaimPorts(): Promise<void> {
    try {
      const reclaimed = await this.#environments.reclaimStaleLeases();
      if (reclaimed.length === 0) return;
      const which = reclaimed.map((l) => `${l.port} (${l.session_id})`).join(", ");
      this.#o.log(`took back ${reclaimed.length} port lease(s) of ended sessions: ${which}`);
    } catch (e) {
      this.#o.log(`port leases not checked: ${(e as Error).message}`);
    }
  }

  #counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const id of this.#ids) {
      const status = this.#o.store.get(id)?.status;
      if (status) counts[status] = (counts[status] ?? 0) + 1;
    }
    return counts;
  }
}
