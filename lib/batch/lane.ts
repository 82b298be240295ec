/**
 * The batch lane's I/O (DESIGN.md §15): tasks the core routes here are claimed and their
 * closed-form requests (lib/batch/prompt.ts) submitted to the configured adapter's provider in
 * batches of up to `batch.max_requests`; each batch is polled every `batch.poll_interval_s`
 * until it ends; then each answer's patch is applied in a fresh worktree of the task, cut from
 * the commit the request showed (`git apply --3way`), committed, and the task completed — or the
 * outcome says why not. Every step is written to the ledger (lib/batch/ledger.ts) before it is
 * acted on, so a stop never loses a batch and never submits one twice: `service run` adopts the
 * batches in flight and polls them again. What comes of each request is handed to the decision
 * core as an event (core/on_batch.ts); what the request cost is recorded at the batch price.
 */
import { dirname } from "node:path";
import type { AgentAdapter } from "../agents/adapters/types.ts";
import { sessionLogPath } from "../agents/runtime_files.ts";
import { type BatchApi, batchApi, type BatchItem, type BatchRequestSpec } from "./api.ts";
import { filesAt } from "./files.ts";
import {
  type BatchEntry,
  type BatchLedger,
  emptyLedger,
  inFlight,
  loadBatchLedger,
  saveBatchLedger,
} from "./ledger.ts";
import { ANSWER_MAX_CHARS, BATCH_MAX_TOKENS } from "./limits.ts";
import { outcomeLog, requestLog } from "./request_log.ts";
import { applyPatch, patchIn } from "./patch.ts";
import { batchPrompt } from "./prompt.ts";
import { type BatchEndpoint, batchModel, batchProviderOf } from "./provider.ts";
import type { SpendTracker } from "../cost/budget.ts";
import { estimateMicroUsd } from "../cost/prices.ts";
import type { UsageReport } from "../cost/report.ts";
import type { BatchOutcome } from "../journal/events.ts";
import type { RoleSettings } from "../config/schema.ts";
import type { RoleTemplate } from "../roles/templates.ts";
import type { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { completionVerdict } from "../verification/verdict.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { keepSessionLog } from "../runs/session_log.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { type WorktreeEnvironments, WorktreeSetupError } from "../worktree_env/environments.ts";
import { routedModel } from "../agent_session/invocation.ts";
import type { BatchLaneEvent, BatchWork } from "./lane_types.ts";

/** `batch:` of service.yaml, with its defaults. */
export interface BatchSettings {
  apiUrl?: string;
  /** Requests per batch (both providers take far more; a smaller batch ends sooner). */
  maxRequests: number;
  /** Files every request shows besides the task's `owned_files`. */
  contextFiles: string[];
  pollIntervalS: number;
}

/** Settings of {@link BatchLane}. */
export interface BatchLaneOptions {
  paths: WorkspacePaths;
  runId: string;
  store: TaskStore;
  /** The configured adapter: its provider's batch API is the lane's. */
  adapter: AgentAdapter;
  /** The provider's endpoint, when its key is set (else the lane takes no task). */
  endpoint?: BatchEndpoint;
  settings: BatchSettings;
  model?: string;
  roles: Readonly<Record<string, RoleSettings>>;
  template: (role: string) => Promise<RoleTemplate>;
  attemptNumber: (taskId: string) => Promise<number>;
  work: BatchWork;
  spend: SpendTracker;
  /** Receives the lane's events for the decision core. */
  push: (events: BatchLaneEvent[]) => void;
  log: (line: string) => void;
  clock: () => number;
  /** The provider's client (tests may hand in their own). */
  api?: (endpoint: BatchEndpoint) => BatchApi;
  /** The worktree environments: a patch is applied in a worktree prepared as an agent's is. */
  environments?: WorktreeEnvironments;
  /** The environment an agent of the task would have (setup commands run with it). */
  agentEnv?: (taskId: string, sessionId: string) => Promise<Record<string, string>>;
}

/** A batch being polled. */
interface Polled {
  batchId: string;
  /** Its requests' tasks. */
  taskIds: string[];
  /** Tasks cancelled while it ran: their answers are not used, but what they cost is counted. */
  dropped: string[];
  timer?: ReturnType<typeof setTimeout>;
}

/** Submits, polls and lands the run's batch requests. */
export class BatchLane {
  readonly #o: BatchLaneOptions;
  readonly #api: BatchApi | undefined;
  #ledger: BatchLedger = emptyLedger();
  readonly #polled = new Map<string, Polled>();
  #closed = false;
  /** Cancels asked of the provider and not answered yet. */
  readonly #cancels = new Set<Promise<void>>();
  /** Ledger writes, one after another. */
  #saving: Promise<void> = Promise.resolve();

  constructor(options: BatchLaneOptions) {
    this.#o = options;
    this.#api = options.endpoint && (options.api ?? batchApi)(options.endpoint);
  }

  /** Read the ledger (before anything is routed). */
  async start(): Promise<void> {
    this.#ledger = await loadBatchLedger(this.#o.paths.batches);
  }

  /**
   * Whether `task` goes through the lane when it starts: it is batch-eligible, its adapter is the
   * configured one (not another its step or role chose: `cli`), whose provider has a batch API
   * whose key is set, it was not tried in the lane in this run
   * (a task of the same id in an earlier run whose request has ended is another task), and no
   * real-time attempt has run (the lane comes first, once).
   */
  routes(task: Task): boolean {
    const earlier = this.#ledger.tasks[task.id];
    const tried = earlier !== undefined && (earlier.run_id === this.#o.runId || !earlier.outcome);
    const adapter = task.cli ?? this.#o.roles[task.role]?.cli ?? this.#o.adapter.name;
    return task.batch_eligible && this.#api !== undefined && adapter === this.#o.adapter.name &&
      !tried && task.attempts === 0 && !task.resume_from;
  }

  /** Whether `taskId`'s request is in the lane now. */
  has(taskId: string): boolean {
    const e = this.#ledger.tasks[taskId];
    return e !== undefined && !e.outcome;
  }

  /** The entry of `taskId`, if it went through the lane. */
  entry(taskId: string): BatchEntry | undefined {
    return this.#ledger.tasks[taskId];
  }

  /** Stop polling (the run ends); batches in flight stay in the ledger for the next run. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const p of this.#polled.values()) clearTimeout(p.timer);
    this.#polled.clear();
    await Promise.all(this.#cancels);
    await this.#saving;
  }

  /** Heartbeats of the tasks whose requests are in flight (the heartbeat monitor spares them). */
  async heartbeat(): Promise<void> {
    for (const e of inFlight(this.#ledger)) {
      try {
        await this.#o.store.heartbeat(e.task_id);
      } catch { /* no longer claimed */ }
    }
  }

  #save(): Promise<void> {
    const snapshot = structuredClone(this.#ledger);
    this.#saving = this.#saving.then(() => saveBatchLedger(this.#o.paths.batches, snapshot));
    return this.#saving;
  }

  /** Claim `taskIds` and submit their requests (events arrive through `push`). */
  submit(taskIds: string[]): void {
    this.#submit(taskIds).catch((e) =>
      this.#o.log(`batch lane: submission failed: ${(e as Error).message}`)
    );
  }

  async #submit(taskIds: string[]): Promise<void> {
    const o = this.#o;
    const provider = batchProviderOf(o.adapter.name)!;
    const prepared: { entry: BatchEntry; request: BatchRequestSpec; attempt: number }[] = [];
    const events: BatchLaneEvent[] = [];
    for (const taskId of taskIds) {
      const sessionId = `b-${o.runId.slice(-4)}-${crypto.randomUUID().slice(0, 8)}`
        .replace(/[^A-Za-z0-9_-]/g, "-");
      try {
        await o.store.claim(taskId, sessionId);
      } catch {
        events.push({ type: "claim_lost", taskId });
        continue;
      }
      const task = o.store.require(taskId);
      try {
        const base = await o.work.targetTip();
        const role = o.roles[task.role] ?? {};
        const model = batchModel(provider, routedModel(o.adapter, task, role.model ?? o.model));
        const files = await filesAt(o.paths.root, base, [
          ...task.owned_files,
          ...o.settings.contextFiles,
        ]);
        const prompt = batchPrompt(await o.template(task.role), task, files);
        prepared.push({
          entry: {
            task_id: taskId,
            run_id: o.runId,
            session_id: sessionId,
            provider,
            adapter: o.adapter.name,
            custom_id: sessionId,
            base,
            model,
            submitted_at: Math.floor(o.clock() / 1000),
          },
          request: { customId: sessionId, model, maxTokens: BATCH_MAX_TOKENS, ...prompt },
          attempt: await o.attemptNumber(taskId),
        });
      } catch (e) {
        events.push(this.#notSubmitted(taskId, sessionId, (e as Error).message));
      }
    }
    if (events.length > 0) o.push(events);
    for (let i = 0; i < prepared.length; i += o.settings.maxRequests) {
      await this.#submitBatch(prepared.slice(i, i + o.settings.maxRequests));
    }
  }

  #notSubmitted(
    taskId: string,
    sessionId: string,
    reason: string,
  ): Extract<BatchLaneEvent, { type: "batch_result" }> {
    return { type: "batch_result", taskId, sessionId, outcome: "not_submitted", reason };
  }

  async #submitBatch(
    chunk: { entry: BatchEntry; request: BatchRequestSpec; attempt: number }[],
  ): Promise<void> {
    const o = this.#o;
    // Written before the request is sent: a stop in between never sends it a second time.
    for (const { entry } of chunk) this.#ledger.tasks[entry.task_id] = entry;
    await this.#save();
    let batchId: string;
    try {
      batchId = await this.#api!.submit(chunk.map((c) => c.request));
    } catch (e) {
      const reason = (e as Error).message;
      for (const { entry } of chunk) Object.assign(entry, { outcome: "not_submitted", reason });
      await this.#save();
      // Its task never started in the lane (no claim row): the log stays in .sdd/runtime.
      for (const { entry, request } of chunk) {
        await this.#writeLog(
          entry,
          `${requestLog(entry, request)}\n--- not submitted ---\n${reason}\n`,
        );
      }
      o.push(chunk.map((c) => this.#notSubmitted(c.entry.task_id, c.entry.session_id, reason)));
      return;
    }
    for (const { entry } of chunk) entry.batch_id = batchId;
    await this.#save();
    for (const { entry, request } of chunk) await this.#writeLog(entry, requestLog(entry, request));
    o.push(chunk.map(({ entry, attempt }) => ({
      type: "batch_submitted",
      taskId: entry.task_id,
      sessionId: entry.session_id,
      provider: entry.provider,
      adapter: entry.adapter,
      batchId,
      customId: entry.custom_id,
      startedAt: entry.submitted_at * 1000,
      attempt,
      model: entry.model,
    })));
    this.#poll(batchId, chunk.map((c) => c.entry.task_id));
  }

  /**
   * The requests an earlier process submitted and never saw end, as events: each in flight is
   * polled again (`batch_adopted`); one written but never known to be sent is not sent again —
   * its task goes to real time (`batch_result`, `not_submitted`).
   */
  async adopt(): Promise<Extract<BatchLaneEvent, { type: "batch_adopted" | "batch_result" }>[]> {
    const o = this.#o;
    const events: Extract<BatchLaneEvent, { type: "batch_adopted" | "batch_result" }>[] = [];
    const batches = new Map<string, string[]>();
    for (const e of Object.values(this.#ledger.tasks)) {
      if (e.outcome || e.run_id !== o.runId) continue;
      const task = o.store.get(e.task_id);
      if (!task || !["CLAIMED", "IN_PROGRESS", "ORPHANED", "OPEN"].includes(task.status)) {
        Object.assign(e, { outcome: "dropped", reason: `the task is ${task?.status ?? "gone"}` });
        continue;
      }
      if (task.status === "ORPHANED") await o.store.requeue(e.task_id, { countAttempt: false });
      if (o.store.require(e.task_id).status === "OPEN") {
        await o.store.claim(e.task_id, e.session_id);
      }
      if (e.batch_id === undefined) {
        const reason = "the service stopped while submitting it; it is not sent again";
        Object.assign(e, { outcome: "not_submitted", reason });
        events.push(this.#notSubmitted(e.task_id, e.session_id, reason));
        continue;
      }
      events.push({
        type: "batch_adopted",
        taskId: e.task_id,
        sessionId: e.session_id,
        batchId: e.batch_id,
        startedAt: e.submitted_at * 1000,
      });
      batches.set(e.batch_id, [...(batches.get(e.batch_id) ?? []), e.task_id]);
    }
    await this.#save();
    for (const [batchId, taskIds] of batches) this.#poll(batchId, taskIds);
    return events;
  }

  /** The task was cancelled: its request's result is dropped. */
  drop(taskId: string): void {
    const e = this.#ledger.tasks[taskId];
    if (!e || e.outcome) return;
    Object.assign(e, {
      outcome: "dropped",
      reason: "the task was cancelled",
      ended_at: Math.floor(this.#o.clock() / 1000),
    });
    const polled = e.batch_id === undefined ? undefined : this.#polled.get(e.batch_id);
    if (polled) {
      polled.taskIds = polled.taskIds.filter((t) => t !== taskId);
      polled.dropped.push(taskId);
      if (polled.taskIds.length === 0) this.#cancel(polled.batchId);
    }
    this.#save().catch(() => {});
    this.#o.push([{
      type: "batch_result",
      taskId,
      sessionId: e.session_id,
      batchId: e.batch_id,
      outcome: "dropped",
      reason: "the task was cancelled",
    }]);
  }

  /** No task of the batch is wanted any more: what the provider has not run yet is not billed. */
  #cancel(batchId: string): void {
    const asked = this.#api!.cancel(batchId).then(
      () =>
        this.#o.log(
          `batch ${batchId}: no task of it is wanted any more; canceled at the provider`,
        ),
      (e) => this.#o.log(`batch ${batchId}: could not cancel it: ${(e as Error).message}`),
    );
    // A run that ends now waits for the answer: the cancel is not lost with the process.
    this.#cancels.add(asked);
    asked.finally(() => this.#cancels.delete(asked));
  }

  #poll(batchId: string, taskIds: string[]): void {
    const polled: Polled = { batchId, taskIds, dropped: [] };
    this.#polled.set(batchId, polled);
    const next = () => {
      if (this.#closed) return;
      polled.timer = setTimeout(async () => {
        try {
          if (await this.#check(polled)) return;
        } catch (e) {
          // A failed look is tried again at the next interval: the batch is still there.
          this.#o.log(`batch ${batchId}: ${(e as Error).message}; polling again`);
        }
        next();
      }, this.#o.settings.pollIntervalS * 1000);
    };
    next();
  }

  /** One look at a batch; true once it ended and its results are handled. */
  async #check(polled: Polled): Promise<boolean> {
    const state = await this.#api!.state(polled.batchId);
    if (!state.ended || this.#closed) return false;
    const entries = polled.taskIds.map((t) => this.#ledger.tasks[t]).filter((e) => e && !e.outcome);
    const dropped = polled.dropped.map((t) => this.#ledger.tasks[t]).filter((e) => e);
    const items = await this.#api!.results(
      polled.batchId,
      [...entries, ...dropped].map((e) => e.custom_id),
    );
    this.#polled.delete(polled.batchId);
    for (const entry of dropped) {
      // Its task was cancelled, but a request the provider ran is billed all the same.
      const item = items.find((i) => i.customId === entry.custom_id)!;
      if (item.outcome === "succeeded" && item.usage) await this.#charge(entry, item);
    }
    for (const entry of entries) {
      if (this.#closed) return true; // the next run polls the rest again
      if (entry.outcome) continue; // dropped meanwhile (its task was cancelled)
      const item = items.find((i) => i.customId === entry.custom_id)!;
      const { outcome, reason, worktree } = await this.#land(entry, item);
      if (entry.outcome) {
        // Dropped while it was being landed: the drop said so; a worktree cut meanwhile goes.
        await this.#o.work.reap(entry.task_id).catch(() => {});
        continue;
      }
      Object.assign(entry, { outcome, reason, ended_at: Math.floor(this.#o.clock() / 1000) });
      await this.#save();
      // A patch's worktree keeps its log when it is captured or reaped; without one, here.
      if (!worktree) await this.#keepLog(entry);
      this.#o.push([{
        type: "batch_result",
        taskId: entry.task_id,
        sessionId: entry.session_id,
        batchId: polled.batchId,
        outcome,
        reason,
      }]);
    }
    return true;
  }

  /** Record what `item` cost, then apply its patch in a fresh worktree and complete the task. */
  async #land(
    entry: BatchEntry,
    item: BatchItem,
  ): Promise<{ outcome: BatchOutcome; reason?: string; worktree?: boolean }> {
    const o = this.#o;
    await this.#writeLog(entry, outcomeLog(item, entry.model));
    if (item.outcome !== "succeeded") return { outcome: item.outcome, reason: item.error };
    const text = item.text ?? "";
    if (item.usage) await this.#charge(entry, item);
    const task = o.store.get(entry.task_id);
    if (task?.status !== "CLAIMED" && task?.status !== "IN_PROGRESS") {
      return { outcome: "dropped", reason: `the task is ${task?.status ?? "gone"}` };
    }
    if (text.length > ANSWER_MAX_CHARS) {
      return {
        outcome: "not_applied",
        reason: `the answer is ${text.length} characters long, more than the ${ANSWER_MAX_CHARS} ` +
          `the lane reads (a request may write ${BATCH_MAX_TOKENS} tokens)`,
      };
    }
    const found = patchIn(text);
    if ("problem" in found) return { outcome: "not_applied", reason: found.problem };
    let registered = false;
    try {
      const worktree = await createWorktree(o.paths.root, entry.session_id, entry.base);
      const logPath = sessionLogPath(o.paths.runtime, entry.session_id);
      o.work.set(entry.task_id, {
        worktree: { ...worktree, base: entry.base },
        sessionId: entry.session_id,
        logPath,
        role: task.role,
      });
      registered = true;
      // Its gates run in this worktree: it gets what an agent's would (copies, links, setup).
      const prepared = await this.#prepare(entry, task.role, worktree.path, logPath);
      if (prepared) return { outcome: "not_applied", reason: prepared, worktree: true };
      const applied = await applyPatch(
        worktree.path,
        found.patch,
        `service: batch patch of ${entry.task_id} (${entry.provider} batch ${entry.batch_id})`,
      );
      if (!applied.applied) {
        return { outcome: "not_applied", reason: applied.reason, worktree: true };
      }
      const summary = `the ${entry.provider} batch API's patch applied: ${applied.files} ` +
        `file${applied.files === 1 ? "" : "s"} (${item.model ?? entry.model})`;
      await o.store.complete(
        entry.task_id,
        { summary, session_id: entry.session_id },
        completionVerdict(o.paths, entry.session_id),
      );
      return {
        outcome: "applied",
        reason: `${applied.files} file${applied.files === 1 ? "" : "s"}`,
        worktree: true,
      };
    } catch (e) {
      // A worktree handed to the task work keeps its log when reaped; else the lane keeps it.
      return { outcome: "not_applied", reason: (e as Error).message, worktree: registered };
    }
  }

  /** Record what a succeeded request cost, at the batch price. */
  async #charge(entry: BatchEntry, item: BatchItem): Promise<void> {
    await this.#o.spend.record(entry.task_id, entry.session_id, batchUsage(item, entry.model), {
      adapter: entry.adapter,
    }).catch((e) =>
      this.#o.log(`${entry.task_id}: could not record spend: ${(e as Error).message}`)
    );
  }

  /** Prepare the patch's worktree as an agent's; the reason when its setup failed. */
  async #prepare(
    entry: BatchEntry,
    role: string,
    tree: string,
    logPath: string,
  ): Promise<string | undefined> {
    const { environments, agentEnv } = this.#o;
    if (!environments || !agentEnv) return undefined;
    try {
      const ports = await environments.leasePorts(entry.session_id, role);
      const env = await agentEnv(entry.task_id, entry.session_id);
      await environments.prepare({ tree, sessionId: entry.session_id, role, env, ports, logPath });
      return undefined;
    } catch (e) {
      if (e instanceof WorktreeSetupError) return e.reason;
      throw e;
    }
  }

  /** Keep `entry`'s log with the run (the board's task detail shows it). */
  async #keepLog(entry: BatchEntry): Promise<void> {
    const logPath = sessionLogPath(this.#o.paths.runtime, entry.session_id);
    await keepSessionLog(this.#o.paths, {
      runId: this.#o.runId,
      taskId: entry.task_id,
      sessionId: entry.session_id,
      logPath,
    }).catch((e) =>
      this.#o.log(
        `${entry.task_id}: could not keep the batch request's log: ${(e as Error).message}`,
      )
    );
  }

  async #writeLog(entry: BatchEntry, text: string): Promise<void> {
    const path = sessionLogPath(this.#o.paths.runtime, entry.session_id);
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.writeTextFile(path, text, { append: true }).catch(() => {});
  }
}

/** What a succeeded request cost: its tokens at the batch price, and at the real-time price. */
function batchUsage(item: BatchItem, requested: string): UsageReport {
  const model = item.model ?? requested;
  const tokens = item.usage!;
  const microUsd = estimateMicroUsd(model, tokens, { batch: true });
  return {
    microUsd,
    source: "estimated",
    batch: true,
    byModel: {
      [model]: {
        inputTokens: tokens.inputTokens,
        cachedInputTokens: tokens.cachedInputTokens,
        outputTokens: tokens.outputTokens,
        microUsd,
        listMicroUsd: estimateMicroUsd(model, tokens),
      },
    },
  };
}
