/**
 * The task store: every task in memory, each change persisted to its YAML spec (atomic write,
 * awaited before the caller answers) and coalesced into the JSON export. A claim checks and
 * sets the status synchronously, so two claimants can never both win.
 */
import { join } from "node:path";
import { ConflictError, NotFoundError, UnprocessableError } from "../errors.ts";
import type { WorkspacePaths } from "../workspace.ts";
import {
  appendLedgerRecord,
  type Evidence,
  ledgerRecord,
  verificationCount,
} from "../verification/ledger.ts";
import { emitTaskChange } from "./changes.ts";
import { checkDependencies, describeProblem } from "./graph.ts";
import {
  ACTIVE,
  SATISFIES_DEPENDENCY,
  type TaskStatus,
  type TaskTrigger,
  transition,
} from "./lifecycle.ts";
import {
  type Bucket,
  bucketOf,
  ensureBacklogDirs,
  loadTaskSpecs,
  saveTaskSpec,
  taskFile,
  taskYaml,
  writeBacklogExport,
} from "./persist.ts";
import { ReadyQueue } from "./ready_queue.ts";
import { claimStoreOwnership, releaseStoreOwnership } from "./owner.ts";
import { isFinished, newTask, type Task, type TaskInput } from "./task.ts";

const NO_EVIDENCE: Evidence = {
  tests_run: false,
  quality_gates_run: false,
  completion_signals_checked: false,
};

/** Options of {@link TaskStore.open}. */
export interface TaskStoreOptions {
  /** Roles tasks may name; undefined accepts any role (no service.yaml loaded). */
  roles?: ReadonlySet<string>;
  /** Seconds without heartbeat before a claimed task is ORPHANED (default 45). */
  heartbeatTimeoutS?: number;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
  /** Where load problems are reported (default console.warn). */
  warn?: (line: string) => void;
}

/** Body of a completion. */
export interface CompleteOptions extends Partial<Evidence> {
  summary?: string;
  operator?: boolean;
  session_id?: string;
}

/** Options of {@link TaskStore.requeue}. */
export interface RequeueOptions {
  /** The reason the task reads meanwhile (its `summary`). */
  reason?: string;
  /** False: the attempt does not count against the task's attempts (default true). */
  countAttempt?: boolean;
  /**
   * The session whose kept work the next attempt starts from (an interrupted attempt's); null
   * starts it afresh from the target branch; undefined leaves the task's choice as it is.
   */
  resumeFrom?: string | null;
}

/** The in-memory task store of one workspace. */
export class TaskStore {
  readonly #paths: WorkspacePaths;
  readonly #roles?: ReadonlySet<string>;
  readonly #timeoutMs: number;
  readonly #clock: () => number;
  readonly #tasks = new Map<string, Task>();
  readonly #dependents = new Map<string, Set<string>>();
  readonly #queues = new Map<string, ReadyQueue>();
  readonly #anyRole = new ReadyQueue();
  readonly #active = new Set<string>();
  readonly #writes = new Map<string, Promise<void>>();
  /** The backlog directory each task's spec was last written to. */
  readonly #onDisk = new Map<string, Bucket>();
  #seq = 0;
  #exportDirty = false;
  #exporting: Promise<void> | undefined;

  private constructor(paths: WorkspacePaths, options: TaskStoreOptions) {
    this.#paths = paths;
    this.#roles = options.roles;
    this.#timeoutMs = (options.heartbeatTimeoutS ?? 45) * 1000;
    this.#clock = options.clock ?? Date.now;
  }

  /** Load every task spec of the workspace into a new store. */
  static async open(paths: WorkspacePaths, options: TaskStoreOptions = {}): Promise<TaskStore> {
    await claimStoreOwnership(paths);
    const store = new TaskStore(paths, options);
    await ensureBacklogDirs(paths);
    const { tasks, problems } = await loadTaskSpecs(paths);
    for (const p of problems) (options.warn ?? console.warn)(`task store: ${p}`);
    for (const task of tasks) store.#index(task);
    // After a crash a task may have a stale copy elsewhere: the first save cleans every directory.
    store.#seq = tasks.reduce((m, t) => Math.max(m, t.seq + 1), 0);
    // A claimant of a previous server process cannot have heartbeated meanwhile: restart its clock.
    const now = new Date(store.#clock()).toISOString();
    for (const id of store.#active) store.#tasks.get(id)!.heartbeat_at = now;
    store.#exportDirty = true;
    return store;
  }

  /** Number of tasks. */
  get size(): number {
    return this.#tasks.size;
  }

  /** One task, or undefined. */
  get(id: string): Task | undefined {
    return this.#tasks.get(id);
  }

  /** One task, or 404. */
  require(id: string): Task {
    const task = this.#tasks.get(id);
    if (!task) throw new NotFoundError("task_not_found", `no task ${JSON.stringify(id)}`);
    return task;
  }

  /** Tasks in creation order, optionally of one status. */
  list(status?: TaskStatus): Task[] {
    const out: Task[] = [];
    for (const t of this.#tasks.values()) if (!status || t.status === status) out.push(t);
    return out;
  }

  /** Task counts by status (every status present, zero when none). */
  counts(): Record<TaskStatus, number> & { total: number } {
    const counts = {
      OPEN: 0,
      CLAIMED: 0,
      IN_PROGRESS: 0,
      DONE: 0,
      CLOSED: 0,
      FAILED: 0,
      BLOCKED: 0,
      ORPHANED: 0,
      CANCELLED: 0,
      total: 0,
    };
    for (const t of this.#tasks.values()) {
      counts[t.status]++;
      counts.total++;
    }
    return counts;
  }

  /**
   * Create tasks atomically: all or none. Members may depend on each other in any order.
   * 409 on a duplicate id, 422 on an unknown role, unknown dependency or cycle.
   */
  async create(inputs: TaskInput[], options: { runId?: string } = {}): Promise<Task[]> {
    const ids = new Map<string, TaskInput & { id: string }>();
    for (const input of inputs) {
      const id = input.id ?? this.#newId();
      if (this.#tasks.has(id) || ids.has(id)) {
        throw new ConflictError(
          "duplicate_id",
          `a task with id ${JSON.stringify(id)} already exists`,
        );
      }
      if (this.#roles && !this.#roles.has(input.role)) {
        throw new UnprocessableError(
          "unknown_role",
          `role ${JSON.stringify(input.role)} is not in service.yaml roles (${
            [...this.#roles].join(", ")
          })`,
        );
      }
      ids.set(id, { ...input, id });
    }
    const graph = new Map([...ids].map(([id, t]) => [id, t.depends_on]));
    const problem = checkDependencies(graph, (id) => this.#tasks.has(id));
    if (problem) {
      throw new UnprocessableError(
        problem.kind === "cycle" ? "cyclic_depends_on" : "unknown_dependency",
        `${describeProblem(problem)}; nothing was created`,
      );
    }
    const now = this.#nowIso();
    const created: Task[] = [];
    for (const input of ids.values()) {
      const task = newTask(input, "BLOCKED", this.#seq++, now, options.runId ?? null);
      this.#index(task);
      created.push(task);
    }
    // Unblock after indexing all, so members that depend on each other resolve correctly.
    for (const task of created) {
      if (task.depends_on.every((d) => SATISFIES_DEPENDENCY.has(this.#tasks.get(d)!.status))) {
        this.#setStatus(task, "OPEN");
      }
    }
    for (const task of created) {
      this.#onDisk.set(task.id, "open"); // new: no copy elsewhere to remove
      emitTaskChange(this.#change(task, null));
    }
    await Promise.all(created.map((t) => this.#persist(t)));
    return created;
  }

  /** Claim `id` for `sessionId` (409 unless OPEN). */
  claim(id: string, sessionId?: string): Promise<Task> {
    const task = this.require(id);
    return this.#claim(task, sessionId);
  }

  /** Claim the ready task of `role` (any role when undefined) with the lowest priority number. */
  claimNext(role: string | undefined, sessionId?: string): Promise<Task> | undefined {
    const queue = role === undefined ? this.#anyRole : this.#queues.get(role);
    const entry = queue?.popValid((e) => {
      const task = this.#tasks.get(e.id);
      return task?.status === "OPEN" && (role === undefined || task.role === role);
    });
    if (!entry) return undefined;
    return this.#claim(this.#tasks.get(entry.id)!, sessionId);
  }

  /**
   * Change what a task not started yet (OPEN or BLOCKED) asks for: its tracker ticket was
   * edited. 409 once the task has started, 422 on an unknown role.
   */
  revise(
    id: string,
    fields: Partial<Pick<Task, "title" | "goal" | "role" | "source">>,
  ): Promise<Task> {
    const task = this.require(id);
    if (task.status !== "OPEN" && task.status !== "BLOCKED") {
      throw new ConflictError("task_started", `task ${JSON.stringify(id)} is ${task.status}`);
    }
    if (fields.role !== undefined && this.#roles && !this.#roles.has(fields.role)) {
      throw new UnprocessableError(
        "unknown_role",
        `role ${JSON.stringify(fields.role)} is not in roles`,
      );
    }
    const requeue = fields.role !== undefined && fields.role !== task.role &&
      task.status === "OPEN";
    Object.assign(task, fields);
    task.updated_at = this.#nowIso();
    task.revision++;
    if (requeue) {
      let queue = this.#queues.get(task.role);
      if (!queue) this.#queues.set(task.role, queue = new ReadyQueue());
      queue.push({ id: task.id, priority: task.priority, seq: task.seq });
    }
    emitTaskChange(this.#change(task, task.status));
    return this.#persist(task).then(() => task);
  }

  /** Record a heartbeat; the first one moves CLAIMED to IN_PROGRESS. */
  heartbeat(id: string): Promise<Task> {
    const task = this.require(id);
    this.#fire(task, "heartbeat", (t) => {
      t.heartbeat_at = this.#nowIso();
    });
    return this.#persist(task).then(() => task);
  }

  /**
   * Complete `id` (from CLAIMED or IN_PROGRESS; an operator may complete any non-terminal
   * task). The evidence flags in the body are the agent's word: kept as `reported_evidence`, a
   * hint, never a ledger flag. A task of a run gets its ledger record once the janitor and the
   * gates have run on its work ({@link recordVerification}); a task outside any run (the task
   * API, external workers) or one an operator completed without any claimant is recorded at once
   * from what the service observed: nothing.
   */
  async complete(id: string, options: CompleteOptions = {}): Promise<Task> {
    const task = this.require(id);
    const reported = options.tests_run !== undefined || options.quality_gates_run !== undefined ||
        options.completion_signals_checked !== undefined
      ? {
        tests_run: options.tests_run === true,
        quality_gates_run: options.quality_gates_run === true,
        completion_signals_checked: options.completion_signals_checked === true,
      }
      : null;
    const claimed = task.status === "CLAIMED" || task.status === "IN_PROGRESS";
    this.#fire(task, options.operator ? "operator_complete" : "complete", (t) => {
      t.summary = options.summary ?? t.summary;
      t.reported_evidence = reported;
      // Nobody worked on it: DONE for good, with no work to land (it satisfies its dependents).
      if (options.operator && !claimed) {
        t.operator_done = true;
        delete t.resume_from;
      }
    });
    // No agent's work will be landed (outside a run, or an operator completed a task nobody
    // worked on): nothing more will be observed, so the record is written now.
    if (task.run_id === null || !claimed) {
      const session = task.session_id ?? options.session_id ?? "operator";
      await this.recordVerification(task.id, session, NO_EVIDENCE);
    } else {
      await this.#persist(task);
    }
    return task;
  }

  /**
   * The service's verdict on one completion (spec §2.9, §4.3 rule 1): appends the ledger record
   * and sets `verification_count` and `flagged_unverified` at the same moment.
   */
  async recordVerification(id: string, sessionId: string, evidence: Evidence): Promise<Task> {
    const task = this.require(id);
    task.verification_count = verificationCount(evidence);
    task.flagged_unverified = task.verification_count === 0;
    task.revision++;
    task.updated_at = this.#nowIso();
    await appendLedgerRecord(
      this.#paths,
      ledgerRecord(task.id, sessionId, evidence, this.#clock()),
    );
    await this.#persist(task);
    return task;
  }

  /** Mark `id` FAILED (from CLAIMED or IN_PROGRESS). */
  fail(id: string, reason?: string): Promise<Task> {
    const task = this.require(id);
    this.#fire(task, "fail", (t) => {
      t.summary = reason ?? t.summary;
    });
    return this.#persist(task).then(() => task);
  }

  /** Cancel `id` (any non-terminal status); its dependents may become ready. */
  cancel(id: string, reason?: string): Promise<Task> {
    const task = this.require(id);
    this.#fire(task, "cancel", (t) => {
      t.summary = reason ?? t.summary;
    });
    return this.#persist(task).then(() => task);
  }

  /**
   * An operator gives a FAILED or CANCELLED task new attempts (`service retry`): OPEN with its
   * attempts reset, or BLOCKED when a dependency is not satisfied yet.
   */
  async retry(id: string, reason = "retried by an operator"): Promise<Task> {
    const task = this.require(id);
    this.#fire(task, "operator_retry", (t) => {
      t.attempts = 0;
      t.session_id = null;
      delete t.resume_from; // fresh attempts start from the target branch
      t.heartbeat_at = null;
      t.summary = reason;
    });
    if (!this.#dependenciesSatisfied(task)) this.#fire(task, "reblock", () => {});
    await this.#persist(task);
    return task;
  }

  /** Requeue an ORPHANED task (409 otherwise). */
  reopen(id: string): Promise<Task> {
    const task = this.require(id);
    this.#fire(task, "reopen", (t) => {
      t.session_id = null;
      t.heartbeat_at = null;
    });
    return this.#persist(task).then(() => task);
  }

  /** The orchestrator saw the agent of `id` end without reporting: ORPHANED now. */
  orphan(id: string, reason?: string): Promise<Task> {
    return this.#apply(id, "orphan", (t) => {
      t.summary = reason ?? t.summary;
    });
  }

  /**
   * Auto-recovery or a retry: ORPHANED (requeue) or DONE (retry) back to OPEN. With
   * `countAttempt: false` the attempt does not count (a rate limit or a stop is not the task's
   * failure). See {@link RequeueOptions.resumeFrom} for where the next attempt starts.
   */
  requeue(id: string, options: RequeueOptions = {}): Promise<Task> {
    const task = this.require(id);
    const trigger: TaskTrigger = task.status === "DONE" ? "retry" : "requeue";
    return this.#apply(id, trigger, (t) => {
      t.session_id = null;
      t.heartbeat_at = null;
      t.summary = options.reason ?? t.summary;
      if (options.countAttempt === false) t.attempts = Math.max(0, t.attempts - 1);
      if (options.resumeFrom === null) delete t.resume_from;
      else if (options.resumeFrom !== undefined) t.resume_from = options.resumeFrom;
    });
  }

  /**
   * Auto-recovery found partial work: ORPHANED to DONE. It lands like any completion, and its
   * ledger record is written the same way, after the janitor and the gates.
   */
  recoverDone(id: string): Promise<Task> {
    return this.#apply(id, "recover_done", () => {});
  }

  /**
   * Make `id`, created outside any run (a tracker ticket, the task API), a task of run `runId`
   * (a continuous run adopting it): its completion is then recorded once, after the run's gates,
   * and operator actions on it are journalled in that run. A task of another run is left alone,
   * unless `reclaim` (a reopened ticket's task, back to OPEN after its run finished with it).
   */
  async joinRun(id: string, runId: string, reclaim = false): Promise<Task> {
    const task = this.require(id);
    if (task.run_id === runId) return task;
    if (
      task.run_id !== null && !(reclaim && (task.status === "OPEN" || task.status === "BLOCKED"))
    ) {
      return task;
    }
    task.run_id = runId;
    task.revision++;
    task.updated_at = this.#nowIso();
    await this.#persist(task);
    return task;
  }

  /** The merge step landed the work: DONE to CLOSED. */
  markMerged(id: string): Promise<Task> {
    return this.#apply(id, "merge_succeeded", () => {});
  }

  /** The merge step gave up (repeated conflicts): DONE to FAILED, naming why. */
  markMergeFailed(id: string, reason: string): Promise<Task> {
    return this.#apply(id, "merge_failed", (t) => {
      t.summary = reason;
    });
  }

  /** Recovery found nothing mergeable and the attempts are spent: ORPHANED to FAILED. */
  giveUp(id: string, reason: string): Promise<Task> {
    return this.#apply(id, "give_up", (t) => {
      t.summary = reason;
    });
  }

  /**
   * Remove finished tasks (CLOSED, FAILED, CANCELLED, done by an operator) of an earlier run from the store, moving
   * their specs to `.sdd/backlog/archive/<label>/`, so a new run may reuse their ids.
   */
  async archive(ids: string[], label: string): Promise<void> {
    for (const id of ids) {
      const task = this.require(id);
      if (!isFinished(task)) {
        throw new ConflictError(
          "task_not_finished",
          `task ${id} is ${task.status}; only finished tasks are archived`,
        );
      }
    }
    await Promise.all(ids.map((id) => this.#writes.get(id)));
    const dir = join(this.#paths.backlog, "archive", label);
    await Deno.mkdir(dir, { recursive: true });
    for (const id of ids) {
      const bucket = this.#onDisk.get(id) ?? bucketOf(this.#tasks.get(id)!.status);
      await Deno.rename(taskFile(this.#paths, bucket, id), join(dir, `${id}.yaml`)).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
      this.#tasks.delete(id);
      this.#onDisk.delete(id);
      this.#active.delete(id);
    }
    this.#exportDirty = true;
  }

  #apply(id: string, trigger: TaskTrigger, mutate: (t: Task) => void): Promise<Task> {
    const task = this.require(id);
    this.#fire(task, trigger, mutate);
    return this.#persist(task).then(() => task);
  }

  /** Move every claimed task whose heartbeat is older than the timeout to ORPHANED. */
  async sweepOrphans(): Promise<Task[]> {
    const now = this.#clock();
    const orphaned: Task[] = [];
    for (const id of [...this.#active]) {
      const task = this.#tasks.get(id)!;
      const last = task.heartbeat_at ? Date.parse(task.heartbeat_at) : 0;
      if (now - last >= this.#timeoutMs) {
        this.#fire(task, "orphan", () => {});
        orphaned.push(task);
      }
    }
    await Promise.all(orphaned.map((t) => this.#persist(t)));
    return orphaned;
  }

  /** Write the JSON export when anything changed since the last one. */
  flushExport(): Promise<void> {
    if (this.#exporting) {
      return this.#exporting.then(() => this.#exportDirty ? this.flushExport() : undefined);
    }
    if (!this.#exportDirty) return Promise.resolve();
    this.#exportDirty = false;
    this.#exporting = writeBacklogExport(this.#paths, this.#tasks.values(), this.#nowIso())
      .catch((e) => {
        this.#exportDirty = true;
        console.error(`task store: cannot write task-backlog.json: ${(e as Error).message}`);
      })
      .finally(() => {
        this.#exporting = undefined;
      });
    return this.#exporting;
  }

  /** Wait for every pending write and write the export. */
  async close(): Promise<void> {
    await Promise.all([...this.#writes.values()]);
    await this.flushExport();
    await releaseStoreOwnership(this.#paths);
  }

  #claim(task: Task, sessionId?: string): Promise<Task> {
    this.#fire(task, "claim", (t) => {
      t.session_id = sessionId ?? `http-${crypto.randomUUID().slice(0, 8)}`;
      t.attempts++;
      t.heartbeat_at = this.#nowIso();
    });
    return this.#persist(task).then(() => task);
  }

  /** Apply a transition or answer 409; re-index, publish, and unblock dependents. */
  #fire(task: Task, trigger: TaskTrigger, mutate: (t: Task) => void): void {
    const result = transition(task.status, trigger);
    if (!result.ok) {
      throw new ConflictError(
        "invalid_transition",
        `task ${JSON.stringify(task.id)}: ${result.reason}`,
      );
    }
    const from = task.status;
    mutate(task);
    this.#setStatus(task, result.to);
    emitTaskChange(this.#change(task, from));
    if (SATISFIES_DEPENDENCY.has(result.to) && !SATISFIES_DEPENDENCY.has(from)) {
      this.#unblockAfter(task);
    } else if (SATISFIES_DEPENDENCY.has(from) && !SATISFIES_DEPENDENCY.has(result.to)) {
      this.#reblockAfter(task);
    }
  }

  #dependenciesSatisfied(task: Task): boolean {
    return task.depends_on.every((d) => {
      const dep = this.#tasks.get(d);
      return dep !== undefined && SATISFIES_DEPENDENCY.has(dep.status);
    });
  }

  /**
   * `task` no longer satisfies its dependents (its work went back for a new attempt or failed to
   * land): those not started yet wait again, so none starts without the work it depends on.
   */
  #reblockAfter(task: Task): void {
    for (const id of this.#dependents.get(task.id) ?? []) {
      const dependent = this.#tasks.get(id)!;
      if (dependent.status !== "OPEN") continue;
      this.#fire(dependent, "reblock", () => {});
      this.#persist(dependent).catch((e) =>
        console.error(`task store: cannot save ${dependent.id}: ${(e as Error).message}`)
      );
    }
  }

  #unblockAfter(task: Task): void {
    for (const id of this.#dependents.get(task.id) ?? []) {
      const dependent = this.#tasks.get(id)!;
      if (dependent.status !== "BLOCKED") continue;
      if (this.#dependenciesSatisfied(dependent)) {
        this.#fire(dependent, "unblock", () => {});
        this.#persist(dependent).catch((e) =>
          console.error(`task store: cannot save ${dependent.id}: ${(e as Error).message}`)
        );
      }
    }
  }

  #setStatus(task: Task, status: TaskStatus): void {
    if (status !== "DONE") delete task.operator_done; // cancelled since: no longer done
    if (task.status !== status) {
      task.status = status;
      if (status === "OPEN") this.#enqueue(task);
    }
    if (ACTIVE.has(status)) this.#active.add(task.id);
    else this.#active.delete(task.id);
    if (!ACTIVE.has(status) && status !== "ORPHANED" && status !== "DONE") task.heartbeat_at = null;
    task.updated_at = this.#nowIso();
    task.revision++;
  }

  #index(task: Task): void {
    this.#tasks.set(task.id, task);
    for (const dep of task.depends_on) {
      let set = this.#dependents.get(dep);
      if (!set) this.#dependents.set(dep, set = new Set());
      set.add(task.id);
    }
    if (task.status === "OPEN") this.#enqueue(task);
    if (ACTIVE.has(task.status)) this.#active.add(task.id);
  }

  #enqueue(task: Task): void {
    const entry = { id: task.id, priority: task.priority, seq: task.seq };
    let queue = this.#queues.get(task.role);
    if (!queue) this.#queues.set(task.role, queue = new ReadyQueue());
    queue.push(entry);
    this.#anyRole.push(entry);
  }

  /** Serialise now, write in order per task; the returned promise settles once durable. */
  #persist(task: Task): Promise<void> {
    const yaml = taskYaml(task);
    const status = task.status;
    const previous = this.#writes.get(task.id) ?? Promise.resolve();
    const next = previous.catch(() => {}).then(async () => {
      await saveTaskSpec(this.#paths, task.id, status, yaml, this.#onDisk.get(task.id));
      this.#onDisk.set(task.id, bucketOf(status));
    });
    this.#writes.set(task.id, next);
    this.#exportDirty = true;
    return next.finally(() => {
      if (this.#writes.get(task.id) === next) this.#writes.delete(task.id);
    });
  }

  #change(task: Task, from: TaskStatus | null) {
    return { task, from, to: task.status, workspace: this.#paths.root };
  }

  #nowIso(): string {
    return new Date(this.#clock()).toISOString();
  }

  #newId(): string {
    for (;;) {
      const id = `t-${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
      if (!this.#tasks.has(id)) return id;
    }
  }
}
