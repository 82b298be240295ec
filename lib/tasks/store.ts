/**
 * The task store: every task in memory, each change written durably to its YAML spec before it
 * takes effect (a change is made on a copy, written, synced, and only then becomes the task, so
 * memory never runs ahead of disk: a write that fails, say on a full disk, changes nothing and
 * answers 507), and coalesced into the JSON export. Changes of one task run one at a time, each
 * checking the status the last one left, so two claimants can never both win. Which waiting
 * tasks a change releases is the graph's to say (./graph.ts); what a completion is worth is
 * verification's (a {@link Verdict} it hands in, whose record is durable before the change is).
 */
import { join } from "node:path";
import { ConflictError, NotFoundError, UnprocessableError } from "../errors.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { emitTaskChange } from "./changes.ts";
import { checkDependencies, DependencyGraph, describeProblem, movesDependents } from "./graph.ts";
import { ACTIVE, type TaskStatus, type TaskTrigger, transition } from "./lifecycle.ts";
import {
  type Bucket,
  bucketOf,
  ensureBacklogDirs,
  type ExportCache,
  loadTaskSpecs,
  saveTaskSpec,
  taskFile,
  taskYaml,
  unreadableSpecs,
  writeBacklogExport,
} from "./persist.ts";
import { ReadyQueue } from "./ready_queue.ts";
import { SpecFiles } from "./spec_files.ts";
import { claimStoreOwnership, releaseStoreOwnership } from "./owner.ts";
import { isFinished, newTask, type ReportedEvidence, type Task, type TaskInput } from "./task.ts";

/** Options of {@link TaskStore.open}. */
export interface TaskStoreOptions {
  /** Roles tasks may name; undefined accepts any role (no service.yaml loaded). */
  roles?: ReadonlySet<string>;
  /** Whether a task may name adapter `name` (`cli`); undefined accepts any. */
  knownAdapter?: (name: string) => boolean;
  /** Seconds without heartbeat before a claimed task is ORPHANED (default 45). */
  heartbeatTimeoutS?: number;
  /** `batch_eligible` of a task created without one (service.yaml's top-level default). */
  batchEligible?: boolean;
  /** Milliseconds since the epoch (tests pin it). */
  clock?: () => number;
  /** Where load problems are reported (default console.warn). */
  warn?: (line: string) => void;
}

/** Body of a completion. */
export interface CompleteOptions extends Partial<ReportedEvidence> {
  summary?: string;
  operator?: boolean;
  session_id?: string;
}

/**
 * The service's verdict on a completion, as verification records it: run in the task's turn on
 * the changed copy (`from`: the status before the change), it sets the copy's verification
 * fields and returns the durable write of its record, which the store awaits before it writes
 * the task (a failed write changes neither); undefined when there is nothing to record yet.
 */
export type Verdict = (
  draft: Task,
  from: TaskStatus,
  nowMs: number,
) => (() => Promise<void>) | undefined;

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
/** What a retry changes with it, and the status it expects (`TaskStore.retry`). */
export interface RetryOptions {
  /** A tracker's ticket as edited or reopened: changed in the same write. */
  fields?: Partial<Pick<Task, "title" | "goal" | "role" | "source">>;
  /** The status the caller saw: the retry is refused (409) when the task has moved since. */
  from?: TaskStatus;
}

export class TaskStore {
  readonly #paths: WorkspacePaths;
  readonly #roles?: ReadonlySet<string>;
  readonly #knownAdapter?: (name: string) => boolean;
  readonly #batchEligible: boolean;
  readonly #timeoutMs: number;
  readonly #clock: () => number;
  readonly #tasks = new Map<string, Task>();
  readonly #graph = new DependencyGraph((id) => this.#tasks.get(id)?.status);
  readonly #queues = new Map<string, ReadyQueue>();
  readonly #anyRole = new ReadyQueue();
  readonly #active = new Set<string>();
  /** The last queued change of each task (changes of one task run one at a time). */
  readonly #pending = new Map<string, Promise<void>>();
  /** Ids of tasks being created (their specs are being written). */
  readonly #creating = new Set<string>();
  /** Tasks whose dependency-driven move could not be written: retried at the next sweep. */
  readonly #unsettled = new Set<string>();
  /** Per task, the last failure to orphan it that was printed: a sweep repeats, the line not. */
  readonly #orphanFailures = new Map<string, string>();
  /** The backlog directory each task's spec was last written to. */
  readonly #onDisk = new Map<string, Bucket>();
  #seq = 0;
  #exportDirty = false;
  readonly #exportCache: ExportCache = new Map();
  /** Superseded spec files, kept to be written again (./spec_files.ts). */
  readonly #files = new SpecFiles();
  /** Claims made through this store, counted, and each task's latest (see {@link claimMark}). */
  #claims = 0;
  readonly #claimOrder = new Map<string, number>();
  #exporting: Promise<void> | undefined;
  #unreadable: string[] = [];

  private constructor(paths: WorkspacePaths, options: TaskStoreOptions) {
    this.#paths = paths;
    this.#roles = options.roles;
    this.#knownAdapter = options.knownAdapter;
    this.#batchEligible = options.batchEligible ?? false;
    this.#timeoutMs = (options.heartbeatTimeoutS ?? 45) * 1000;
    this.#clock = options.clock ?? Date.now;
  }

  /** Load every task spec of the workspace into a new store. */
  static async open(paths: WorkspacePaths, options: TaskStoreOptions = {}): Promise<TaskStore> {
    await claimStoreOwnership(paths);
    const store = new TaskStore(paths, options);
    await ensureBacklogDirs(paths);
    const loaded = await loadTaskSpecs(paths);
    const { tasks, problems } = loaded;
    for (const p of problems) (options.warn ?? console.warn)(`task store: ${p}`);
    store.#unreadable = unreadableSpecs(loaded);
    for (const task of tasks) store.#index(task);
    // After a crash a task may have a stale copy elsewhere: the first save cleans every directory.
    store.#seq = tasks.reduce((m, t) => Math.max(m, t.seq + 1), 0);
    // A claimant of a previous server process cannot have heartbeated meanwhile: restart its clock.
    const now = new Date(store.#clock()).toISOString();
    for (const id of store.#active) store.#tasks.get(id)!.heartbeat_at = now;
    // A dependency's move whose dependents were not written yet (a crash, a full disk).
    await Promise.all(
      tasks.filter((t) => t.status === "BLOCKED").map((t) => store.#settleDependent(t)),
    );
    store.#exportDirty = true;
    return store;
  }

  /** The spec files skipped when the store was opened, each with why (garbage, torn, wrong id). */
  get unreadableSpecs(): readonly string[] {
    return this.#unreadable;
  }

  /** The roles tasks may name (service.yaml's); undefined when any role is taken. */
  get roles(): ReadonlySet<string> | undefined {
    return this.#roles;
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
   * 409 on a duplicate id, 422 on an unknown role, unknown dependency or cycle. The tasks exist
   * (in `list()`, for claims, for listeners) only once every spec is durable: a failed write
   * (507 on a full disk) creates nothing, and a retry may use the same ids.
   */
  async create(inputs: TaskInput[], options: { runId?: string } = {}): Promise<Task[]> {
    const ids = new Map<string, TaskInput & { id: string }>();
    for (const input of inputs) {
      const id = input.id ?? this.#newId();
      if (this.#tasks.has(id) || this.#creating.has(id) || ids.has(id)) {
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
      if (input.cli && this.#knownAdapter && !this.#knownAdapter(input.cli)) {
        throw new UnprocessableError(
          "unknown_adapter",
          `adapter ${JSON.stringify(input.cli)} is not one this service knows (a built-in, one ` +
            "registered under adapters:, generic with cli_command, or generic:<role> for a " +
            "role with a cli_command of its own)",
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
    // A member of the batch never satisfies another (it is new): only existing tasks can.
    const ready = (input: TaskInput) =>
      input.depends_on.every((d) => !ids.has(d) && this.#graph.satisfied(d));
    const created = [...ids.values()].map((input) =>
      newTask(input, {
        status: ready(input) ? "OPEN" : "BLOCKED",
        seq: this.#seq++,
        now,
        runId: options.runId ?? null,
        batchEligible: this.#batchEligible,
      })
    );
    for (const id of ids.keys()) this.#creating.add(id);
    try {
      await this.#writeNew(created);
    } finally {
      for (const id of ids.keys()) this.#creating.delete(id);
    }
    for (const task of created) {
      this.#index(task);
      this.#onDisk.set(task.id, "open"); // new: no copy elsewhere to remove
      this.#encodeForExport(task);
    }
    this.#exportDirty = true;
    for (const task of created) emitTaskChange(this.#change(task, null));
    // A dependency may have moved while the specs were written.
    await Promise.all(created.map((task) => this.#settleDependent(task)));
    return created;
  }

  /**
   * A mark of the claims made so far: a task {@link claimedSince} it was claimed afterwards —
   * by a live claimant, not left claimed by an earlier process (whose claims were loaded).
   */
  claimMark(): number {
    return this.#claims;
  }

  /** True when `id`'s latest claim was made after `mark` was taken. */
  claimedSince(id: string, mark: number): boolean {
    return (this.#claimOrder.get(id) ?? 0) > mark;
  }

  /** Claim `id` for `sessionId` (409 unless OPEN), on `worker` when a remote worker runs it. */
  async claim(id: string, sessionId?: string, worker?: string): Promise<Task> {
    const task = this.require(id);
    await this.#claim(task, sessionId, worker);
    return task;
  }

  /**
   * Claim the ready task of `role` (any role when undefined) with the lowest priority number;
   * undefined when none is ready. A task whose claim could not be written stays ready.
   */
  claimNext(role: string | undefined, sessionId?: string): Promise<Task | undefined> {
    return this.claimNextOf({ role, sessionId });
  }

  /**
   * {@link claimNext}, passing over the ready tasks `skip` names (they stay ready for others):
   * a worker token's `/tasks/next` takes no task of a run (lib/workers/task_api_guard.ts).
   */
  async claimNextOf(
    o: { role?: string; sessionId?: string; skip?: (task: Task) => boolean },
  ): Promise<Task | undefined> {
    const { role, sessionId } = o;
    const queue = role === undefined ? this.#anyRole : this.#queues.get(role);
    const passed: Task[] = [];
    try {
      for (;;) {
        const entry = queue?.popValid((e) => {
          const task = this.#tasks.get(e.id);
          if (task?.status !== "OPEN" || (role !== undefined && task.role !== role)) return false;
          if (!o.skip?.(task)) return true;
          passed.push(task);
          return false;
        });
        if (!entry) return undefined;
        const task = this.#tasks.get(entry.id)!;
        try {
          await this.#claim(task, sessionId);
          return task;
        } catch (e) {
          if (task.status === "OPEN") this.#enqueue(task);
          // Another claimant took it while this claim waited for its turn: try the next one.
          if (e instanceof ConflictError && task.status !== "OPEN") continue;
          throw e;
        }
      }
    } finally {
      for (const task of passed) if (task.status === "OPEN") this.#enqueue(task);
    }
  }

  /**
   * Change what a task not started yet (OPEN or BLOCKED) asks for: its tracker ticket was
   * edited. 409 once the task has started, 422 on an unknown role.
   */
  async revise(
    id: string,
    fields: Partial<Pick<Task, "title" | "goal" | "role" | "source">>,
  ): Promise<Task> {
    const task = this.require(id);
    this.#refuseUnknownRole(fields.role);
    await this.#update(task, (t) => {
      if (t.status !== "OPEN" && t.status !== "BLOCKED") {
        throw new ConflictError("task_started", `task ${JSON.stringify(id)} is ${t.status}`);
      }
      Object.assign(t, fields);
      this.#touch(t);
    });
    return task;
  }

  /** 422 when `role` is given and is not one of the configured roles. */
  #refuseUnknownRole(role: string | undefined): void {
    if (role !== undefined && this.#roles && !this.#roles.has(role)) {
      throw new UnprocessableError("unknown_role", `role ${JSON.stringify(role)} is not in roles`);
    }
  }

  /**
   * Record a heartbeat; the first one moves CLAIMED to IN_PROGRESS. A claimant naming another
   * session than the one holding `id` now is 409 and renews nothing.
   */
  heartbeat(id: string, sessionId?: string): Promise<Task> {
    const task = this.require(id);
    return this.#update(task, (t) => {
      refuseStaleSession(t, sessionId);
      this.#transit(t, "heartbeat", () => {
        t.heartbeat_at = this.#nowIso();
      });
    }).then(() => task);
  }

  /**
   * Complete `id` (from CLAIMED or IN_PROGRESS; an operator may complete any non-terminal
   * task). The evidence flags in the body are the agent's word: kept as `reported_evidence`, a
   * hint, never a ledger flag. `verdict` is verification's say on it, recorded in the same
   * change (lib/verification/verdict.ts: at once when no agent's work will land, else later by
   * {@link recordVerdict} once the janitor and the gates have run).
   */
  async complete(id: string, options: CompleteOptions, verdict: Verdict): Promise<Task> {
    const task = this.require(id);
    const reported = options.tests_run !== undefined || options.quality_gates_run !== undefined ||
        options.completion_signals_checked !== undefined
      ? {
        tests_run: options.tests_run === true,
        quality_gates_run: options.quality_gates_run === true,
        completion_signals_checked: options.completion_signals_checked === true,
      }
      : null;
    let record: (() => Promise<void>) | undefined;
    await this.#update(task, (t) => {
      const from = t.status;
      const claimed = from === "CLAIMED" || from === "IN_PROGRESS";
      if (!options.operator) refuseStaleSession(t, options.session_id);
      this.#transit(t, options.operator ? "operator_complete" : "complete", () => {
        t.summary = options.summary ?? t.summary;
        t.reported_evidence = reported;
        // Nobody worked on it: DONE for good, with no work to land (it satisfies its dependents).
        if (options.operator && !claimed) {
          t.operator_done = true;
          delete t.resume_from;
        }
      });
      record = verdict(t, from, this.#clock());
    }, { before: () => record?.() });
    return task;
  }

  /**
   * Record verification's verdict on the completion of `id` (spec §2.9, §4.3 rule 1): its record
   * is durable before the task's verification fields change.
   */
  async recordVerdict(id: string, verdict: Verdict): Promise<Task> {
    const task = this.require(id);
    let record: (() => Promise<void>) | undefined;
    await this.#update(task, (t) => {
      record = verdict(t, t.status, this.#clock());
      this.#touch(t);
    }, { emit: false, before: () => record?.() });
    return task;
  }

  /** Mark `id` FAILED (from CLAIMED or IN_PROGRESS); a claimant naming another session is 409. */
  fail(id: string, reason?: string, sessionId?: string): Promise<Task> {
    const task = this.require(id);
    return this.#update(task, (t) => {
      refuseStaleSession(t, sessionId);
      this.#transit(t, "fail", () => {
        t.summary = reason ?? t.summary;
      });
    }).then(() => task);
  }

  /** Cancel `id` (any non-terminal status); its dependents may become ready. */
  cancel(id: string, reason?: string): Promise<Task> {
    return this.#apply(id, "cancel", (t) => {
      // Without a reason of its own the cancel is an operator's, not the last failure's words.
      t.summary = reason ?? null;
    });
  }

  /**
   * Cancel `id` only if its status is one of `statuses` when the cancel is written, after any
   * change already on its way (a claim, a landing); false, and nothing written, otherwise. A
   * tracker's ticket cancels its task so: closed, before its work landed; without its wanted
   * labels, before its work started.
   */
  async cancelWhile(
    id: string,
    reason: string,
    statuses: ReadonlySet<TaskStatus>,
  ): Promise<boolean> {
    const task = this.require(id);
    return await this.#update(task, (t) => {
      if (!statuses.has(t.status)) return false;
      this.#transit(t, "cancel", () => {
        t.summary = reason;
      });
    });
  }

  /**
   * An operator gives a FAILED or CANCELLED task new attempts (`service retry`): OPEN with its
   * attempts reset, or BLOCKED when a dependency is not satisfied yet. `fields` (a tracker's
   * ticket as edited or reopened) change in the same write, so no claim takes the old text;
   * `from` (the status its caller saw) refuses it, 409, when the task has moved since.
   */
  async retry(
    id: string,
    reason = "retried by an operator",
    options: RetryOptions = {},
  ): Promise<Task> {
    const { fields = {}, from } = options;
    const task = this.require(id);
    this.#refuseUnknownRole(fields.role);
    await this.#update(task, (t) => {
      if (from !== undefined && t.status !== from) {
        throw new ConflictError("task_moved", `task ${JSON.stringify(id)} is ${t.status} now`);
      }
      this.#transit(t, "operator_retry", () => {
        t.attempts = 0;
        t.session_id = null;
        delete t.resume_from; // fresh attempts start from the target branch
        t.heartbeat_at = null;
        t.summary = reason;
        Object.assign(t, fields);
      });
      if (!this.#graph.ready(t)) this.#transit(t, "reblock");
    });
    return task;
  }

  /** Requeue an ORPHANED task (409 otherwise). */
  reopen(id: string): Promise<Task> {
    return this.#apply(id, "reopen", (t) => {
      t.session_id = null;
      t.heartbeat_at = null;
    });
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
    await this.#update(task, (t) => {
      if (t.run_id === runId) return false;
      const waiting = t.status === "OPEN" || t.status === "BLOCKED";
      if (t.run_id !== null && !(reclaim && waiting)) return false;
      t.run_id = runId;
      this.#touch(t);
    }, { emit: false });
    return task;
  }

  /** The merge step landed the work: DONE to CLOSED. */
  markMerged(id: string): Promise<Task> {
    return this.#apply(id, "merge_succeeded", () => {});
  }

  /**
   * Start-up repair: the run journal says `id`'s work landed (`task_merged`), but the store
   * never recorded it (its write failed after the row was durable: a full disk, a kill). CLOSED,
   * whatever the store says, so that no run lands it again.
   */
  closeLandedPerJournal(id: string): Promise<Task> {
    return this.#apply(id, "journal_merged", () => {});
  }

  /** The merge step gave up (repeated conflicts): DONE to FAILED, naming why. */
  markMergeFailed(id: string, reason: string): Promise<Task> {
    return this.#apply(id, "merge_failed", (t) => {
      t.summary = reason;
    });
  }

  /**
   * Recovery found nothing mergeable and the attempts are spent: ORPHANED to FAILED. No session
   * holds it any more (its lease ran out), so a worker that comes back late is refused.
   */
  giveUp(id: string, reason: string): Promise<Task> {
    return this.#apply(id, "give_up", (t) => {
      t.summary = reason;
      t.session_id = null;
      t.heartbeat_at = null;
    });
  }

  /**
   * Remove finished tasks (CLOSED, FAILED, CANCELLED, done by an operator) of an earlier run from
   * the store, moving
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
    await Promise.all(ids.map((id) => this.#pending.get(id)));
    const dir = join(this.#paths.backlog, "archive", label);
    await Deno.mkdir(dir, { recursive: true });
    for (const id of ids) {
      const bucket = this.#onDisk.get(id) ?? bucketOf(this.#tasks.get(id)!.status);
      await Deno.rename(taskFile(this.#paths, bucket, id), join(dir, `${id}.yaml`)).catch((e) => {
        if (!(e instanceof Deno.errors.NotFound)) throw e;
      });
      this.#tasks.delete(id);
      this.#exportCache.delete(id);
      this.#onDisk.delete(id);
      this.#active.delete(id);
    }
    this.#exportDirty = true;
  }

  async #apply(id: string, trigger: TaskTrigger, mutate: (t: Task) => void): Promise<Task> {
    const task = this.require(id);
    await this.#update(task, (t) => this.#transit(t, trigger, () => mutate(t)));
    return task;
  }

  /**
   * Move every claimed task whose heartbeat is older than the timeout to ORPHANED (and retry
   * the dependents whose unblocking could not be written before).
   */
  async sweepOrphans(): Promise<Task[]> {
    const now = this.#clock();
    const stale = (t: Task) =>
      ACTIVE.has(t.status) &&
      now - (t.heartbeat_at ? Date.parse(t.heartbeat_at) : 0) >= this.#timeoutMs;
    const candidates = [...this.#active].map((id) => this.#tasks.get(id)!).filter(stale);
    const orphaned: Task[] = [];
    await Promise.all(
      candidates.map((task) =>
        this.#update(task, (t) => stale(t) ? this.#transit(t, "orphan") : false)
          .then((changed) => {
            this.#orphanFailures.delete(task.id);
            if (changed) orphaned.push(task);
          })
          .catch((e) => {
            const why = (e as Error).message;
            // The same failure names another temporary file each time: compare without it.
            const same = why.replace(/\.tmp-\d+-[A-Za-z0-9]+/g, "");
            if (this.#orphanFailures.get(task.id) === same) return;
            this.#orphanFailures.set(task.id, same);
            console.error(`task store: cannot orphan ${task.id}: ${why} (tried again each sweep)`);
          })
      ),
    );
    for (const id of this.#unsettled) {
      this.#unsettled.delete(id);
      const task = this.#tasks.get(id);
      if (task) await this.#settleDependent(task);
    }
    return orphaned;
  }

  /** Write the JSON export when anything changed since the last one. */
  flushExport(): Promise<void> {
    if (this.#exporting) {
      return this.#exporting.then(() => this.#exportDirty ? this.flushExport() : undefined);
    }
    if (!this.#exportDirty) return Promise.resolve();
    this.#exportDirty = false;
    this.#exporting = writeBacklogExport(this.#paths, this.#tasks.values(), {
      now: this.#nowIso(),
      cache: this.#exportCache,
    })
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
    await Promise.all([...this.#pending.values()]);
    await this.flushExport();
    await this.#files.close();
    await releaseStoreOwnership(this.#paths);
  }

  #claim(task: Task, sessionId?: string, worker?: string): Promise<boolean> {
    return this.#update(task, (t) =>
      this.#transit(t, "claim", () => {
        this.#claimOrder.set(t.id, ++this.#claims);
        t.session_id = sessionId ?? `http-${crypto.randomUUID().slice(0, 8)}`;
        t.attempts++;
        t.heartbeat_at = this.#nowIso();
        if (worker) t.worker = worker;
        else delete t.worker;
      }));
  }

  /**
   * The one way a task changes: `edit` changes a copy of it (throwing to refuse, returning false
   * when there is nothing to do), the copy is written durably (after `before`, when given), and
   * only then does it become the task, its queues and dependents follow, and listeners hear of
   * it. Changes of one task run one at a time, each seeing the last one's result. A failed write
   * changes nothing in memory either. Resolves to whether anything changed, once the dependents
   * the change made ready (or sent back to wait) are written too.
   */
  #update(
    task: Task,
    edit: (draft: Task) => boolean | void,
    options: { emit?: boolean; before?: () => Promise<void> | undefined } = {},
  ): Promise<boolean> {
    const previous = this.#pending.get(task.id) ?? Promise.resolve();
    let dependents: Promise<void>[] = [];
    const run = previous.then(async () => {
      if (this.#tasks.get(task.id) !== task) {
        throw new NotFoundError("task_not_found", `task ${JSON.stringify(task.id)} was archived`);
      }
      const draft = structuredClone(task);
      if (edit(draft) === false) return false;
      await options.before?.();
      const bucket = bucketOf(draft.status);
      await saveTaskSpec(this.#paths, {
        id: draft.id,
        status: draft.status,
        yaml: taskYaml(draft),
        previous: this.#onDisk.get(draft.id),
        files: this.#files,
      });
      this.#onDisk.set(draft.id, bucket);
      dependents = this.#commit(task, draft, options.emit ?? true);
      return true;
    });
    const tail = run.then(() => {}, () => {});
    this.#pending.set(task.id, tail);
    tail.then(() => {
      if (this.#pending.get(task.id) === tail) this.#pending.delete(task.id);
    });
    // Waited for outside this task's queue: a dependent's change never waits on this one.
    return run.then(async (changed) => {
      await Promise.all(dependents);
      return changed;
    });
  }

  /** Make the durable `draft` the task: index it, tell listeners, move its dependents. */
  #commit(task: Task, draft: Task, emit: boolean): Promise<void>[] {
    const from = task.status;
    const role = task.role;
    // The draft may have dropped optional fields (operator_done, resume_from): drop them here too.
    for (const key of Object.keys(task)) {
      if (!(key in draft)) delete (task as Partial<Task>)[key as keyof Task];
    }
    Object.assign(task, draft);
    this.#exportDirty = true;
    this.#encodeForExport(task);
    if (ACTIVE.has(task.status)) this.#active.add(task.id);
    else this.#active.delete(task.id);
    if (task.status === "OPEN" && from !== "OPEN") this.#enqueue(task);
    else if (task.status === "OPEN" && task.role !== role) {
      this.#queueOf(task.role).push(this.#entry(task));
    }
    if (emit) emitTaskChange(this.#change(task, from));
    if (!movesDependents(from, task.status)) return [];
    return this.#graph.dependentsOf(task.id).flatMap((id) => {
      const dependent = this.#tasks.get(id);
      return dependent ? [this.#settleDependent(dependent)] : [];
    });
  }

  /**
   * Bring a task's BLOCKED/OPEN status in line with its dependencies (the graph's
   * `dependencyMove`). A write that fails is retried at the next sweep.
   */
  #settleDependent(task: Task): Promise<void> {
    return this.#update(task, (t) => {
      const move = this.#graph.move(t);
      if (!move) return false;
      this.#transit(t, move);
    }).then(() => {}, (e) => {
      this.#unsettled.add(task.id);
      console.error(`task store: cannot save ${task.id}: ${(e as Error).message}`);
    });
  }

  /** Check `trigger` on a draft (409 when not allowed), apply `mutate`, then the new status. */
  #transit(t: Task, trigger: TaskTrigger, mutate: () => void = () => {}): void {
    const result = transition(t.status, trigger);
    if (!result.ok) {
      throw new ConflictError(
        "invalid_transition",
        `task ${JSON.stringify(t.id)}: ${result.reason}`,
      );
    }
    mutate();
    t.status = result.to;
    if (t.status !== "DONE") delete t.operator_done; // cancelled or retried since: no longer done
    if (!ACTIVE.has(t.status) && t.status !== "ORPHANED" && t.status !== "DONE") {
      t.heartbeat_at = null;
    }
    this.#touch(t);
  }

  /** A draft changed: a new revision now. */
  #touch(t: Task): void {
    t.updated_at = this.#nowIso();
    t.revision++;
  }

  /** Write the specs of new tasks; when one fails, remove the others and throw. */
  async #writeNew(tasks: Task[]): Promise<void> {
    const results = await Promise.allSettled(
      tasks.map((t) =>
        saveTaskSpec(this.#paths, {
          id: t.id,
          status: t.status,
          yaml: taskYaml(t),
          previous: "open",
          files: this.#files,
        })
      ),
    );
    const failed = results.find((r) => r.status === "rejected");
    if (!failed) return;
    await Promise.all(
      tasks.map((t, i) =>
        results[i].status === "fulfilled"
          ? Deno.remove(taskFile(this.#paths, "open", t.id)).catch(() => {})
          : undefined
      ),
    );
    throw (failed as PromiseRejectedResult).reason;
  }

  /**
   * Encode a task for the export now, a few microseconds per change, rather than thousands at
   * once at the next export: a burst of claims would otherwise hold the event loop for
   * milliseconds each second.
   */
  #encodeForExport(task: Task): void {
    this.#exportCache.set(task.id, { revision: task.revision, json: JSON.stringify(task) });
  }

  #index(task: Task): void {
    this.#tasks.set(task.id, task);
    this.#graph.add(task);
    if (task.status === "OPEN") this.#enqueue(task);
    if (ACTIVE.has(task.status)) this.#active.add(task.id);
  }

  #entry(task: Task) {
    return { id: task.id, priority: task.priority, seq: task.seq };
  }

  #queueOf(role: string): ReadyQueue {
    let queue = this.#queues.get(role);
    if (!queue) this.#queues.set(role, queue = new ReadyQueue());
    return queue;
  }

  #enqueue(task: Task): void {
    const entry = this.#entry(task);
    this.#queueOf(task.role).push(entry);
    this.#anyRole.push(entry);
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

/**
 * A claimant that names its session speaks only for the claim it holds: an agent whose lease
 * ran out (its worker stopped heartbeating, the task went to another session) cannot complete
 * or fail the task that another session holds now (409).
 */
function refuseStaleSession(t: Task, sessionId: string | undefined): void {
  if (!sessionId || !t.session_id || sessionId === t.session_id) return;
  throw new ConflictError(
    "stale_session",
    `task ${JSON.stringify(t.id)} is held by session ${t.session_id}, not ${sessionId}: ` +
      "this session's claim lapsed (its lease expired), so its report is not taken",
  );
}
