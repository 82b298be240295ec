/**
 * The built-in Kubernetes launcher (DESIGN.md §17): every `poll_interval_s` it lists the run's
 * Jobs and their pods by label, carries out the plan (lib/kubernetes/plan.ts) — deletes, lapses,
 * lost sessions, adoptions — and, while fewer than `max_in_flight` Jobs are live, asks the run's
 * decision core for tasks to reserve (the one scheduling policy decides which may start). For
 * each it mints a one-time claim ticket bound to the task and a new session, and creates the
 * task's Job. A Job that cannot be created gives its task back and says why; after Jobs that end
 * before their pod claims (a missing Secret, an image that does not pull) it waits longer
 * before the next, so a broken configuration does not spin.
 */
import type { KubernetesWorkersBlock } from "../config/kubernetes_schema.ts";
import type { TicketBook } from "../workers/tickets.ts";
import { type KubeApi, KubeApiError } from "./api.ts";
import { jobManifest, type JobOwner, podIsolation } from "./manifest.ts";
import { jobName, runSelector } from "./names.ts";
import { type ListedPod, planJobs, type TaskLease } from "./plan.ts";

/** A task as the launcher needs it from the store. */
export interface LaunchTask extends TaskLease {
  role: string;
}

/** Options of {@link Launcher}. */
export interface LauncherOptions {
  settings: KubernetesWorkersBlock;
  api: KubeApi;
  tickets: TicketBook;
  runId: string;
  /** `server.public_url`. */
  serverUrl: string;
  cloneUrl: string;
  memoryMb?: number;
  cpuCores?: number;
  /** The Jobs' owner (the orchestrator's StatefulSet), when it runs in the cluster. */
  owner?: JobOwner;
  /** The run's tasks now. */
  tasks: () => ReadonlyMap<string, LaunchTask>;
  /** The agent's time limit of a task (s): its Job's deadline is this plus 15 minutes. */
  timeoutS: (taskId: string) => number;
  /** A new session id. */
  sessionId: () => string;
  /** Ask the decision core to reserve up to `free` tasks for Jobs (resolves with them). */
  reserve: (free: number) => Promise<{ taskId: string }[]>;
  /** A reserved task's Job ended (or was not created) before its pod claimed it. */
  lapse: (taskId: string, reason: string) => void;
  /** An earlier process's live Job for an OPEN task: keep the task reserved for it. */
  adopt: (taskId: string, job: string) => void;
  /** A session's pod ended while it held its task. */
  lost: (sessionId: string, reason: string) => void;
  log: (line: string) => void;
  clock?: () => number;
}

/** Jobs created at once (each is one API round trip). */
const CREATES_AT_ONCE = 8;

/** The longest wait after Jobs that ended before their pod claimed (ms). */
const MAX_BACKOFF_MS = 5 * 60_000;

/** Creates, counts and reaps the run's Jobs. */
export class Launcher {
  readonly #o: LauncherOptions;
  readonly #clock: () => number;
  /** The session each task is reserved for (its Job created or adopted here). */
  readonly #reserved = new Map<string, string>();
  /** Jobs whose lapse was acted on (said once: its task is OPEN again, reserved anew). */
  readonly #handled = new Set<string>();
  /** Pod waits already said (job → reason). */
  readonly #said = new Map<string, string>();
  /** Lapses in a row; no Job is created before `#quietUntil`. */
  #lapses = 0;
  #quietUntil = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #stopped = false;
  #cycle: Promise<void> = Promise.resolve();
  /** Jobs created by this process (for the bench and `status`). */
  created = 0;

  constructor(options: LauncherOptions) {
    this.#o = options;
    this.#clock = options.clock ?? Date.now;
  }

  /** Start the passes (the first now). */
  start(): void {
    const loop = () => {
      if (this.#stopped) return;
      this.#cycle = this.pass().catch((e) =>
        this.#o.log(`kubernetes: ${(e as Error).message}; trying again`)
      ).finally(() => {
        if (!this.#stopped) this.#timer = setTimeout(loop, this.#o.settings.poll_interval_s * 1000);
      });
    };
    loop();
  }

  /** Stop the passes; the Jobs go on (the next run adopts them). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#cycle;
  }

  /** One pass: list, judge, act, then create what fits. */
  async pass(): Promise<void> {
    const o = this.#o;
    const selector = runSelector(o.runId);
    const [jobs, pods] = await Promise.all([o.api.listJobs(selector), o.api.listPods(selector)]);
    const tasks = o.tasks();
    this.#forgetSettled(tasks);
    const plan = planJobs({
      jobs: jobs.filter((j) => j.runId === o.runId),
      pods,
      tasks,
      reserved: this.#reserved,
      maxInFlight: o.settings.max_in_flight,
      now: this.#clock(),
      ttlAfterFinishedMs: o.settings.ttl_after_finished_s * 1000,
    });
    for (const d of plan.delete) {
      await o.api.deleteJob(d.job);
      o.log(`kubernetes: deleted Job ${d.job}: ${d.reason}`);
    }
    for (const a of plan.adopt) {
      this.#reserved.set(a.taskId, a.sessionId);
      o.adopt(a.taskId, a.job);
    }
    for (const l of plan.lapsed) {
      if (this.#handled.has(l.job)) continue;
      this.#handled.add(l.job);
      this.#reserved.delete(l.taskId);
      await o.tickets.revoke(l.sessionId);
      this.#lapses++;
      const wait = Math.min(MAX_BACKOFF_MS, 5000 * 2 ** (this.#lapses - 1));
      this.#quietUntil = this.#clock() + wait;
      o.lapse(l.taskId, `${l.reason} (in ${Math.round(wait / 1000)} s)`);
    }
    // A loss is said again each pass while its session still holds the task: a pod that died
    // right after its claim (an OOM kill at start) ends before this process has finished
    // handing the task out, and a loss said then finds no session yet and is dropped
    // (lib/workers/remote_work.ts); saying it once left the task to wait out its lease. Said
    // again after it was acted on, it finds nothing and does nothing.
    for (const l of plan.lost) o.lost(l.sessionId, l.reason);
    this.#sayPodWaits(pods);
    if (plan.free < 1 || this.#clock() < this.#quietUntil || this.#stopped) return;
    const reserved = await o.reserve(plan.free);
    if (reserved.length > 0) await this.#createAll(reserved.map((r) => r.taskId));
  }

  /** Reservations whose task moved on (claimed, cancelled, done) are no longer this one's. */
  #forgetSettled(tasks: ReadonlyMap<string, LaunchTask>): void {
    for (const [taskId, sessionId] of this.#reserved) {
      const task = tasks.get(taskId);
      if (task?.status === "OPEN") continue;
      this.#reserved.delete(taskId);
      if (task?.session_id === sessionId) this.#lapses = 0; // its pod claimed: Jobs work
    }
  }

  /**
   * Mint the tickets of reserved `taskIds` (one durable write) and create their Jobs, a few at
   * a time; a task whose Job cannot be created is given back with the API server's words.
   */
  async #createAll(taskIds: string[]): Promise<void> {
    const o = this.#o;
    const tasks = o.tasks();
    const jobs = taskIds.map((taskId) => {
      const sessionId = o.sessionId();
      const deadlineS = o.settings.active_deadline_s ?? o.timeoutS(taskId) + 900;
      return { taskId, sessionId, name: jobName(taskId, sessionId), deadlineS };
    });
    let tickets: string[];
    try {
      tickets = await o.tickets.mintAll(jobs.map((j) => ({
        run_id: o.runId,
        task_id: j.taskId,
        session_id: j.sessionId,
        job: j.name,
        isolation: podIsolation(o.settings.image),
        expires_at: this.#clock() + j.deadlineS * 1000,
      })));
    } catch (e) {
      for (const j of jobs) {
        o.lapse(j.taskId, `could not keep its claim ticket: ${(e as Error).message}`);
      }
      return;
    }
    let next = 0;
    const create = async () => {
      while (next < jobs.length) {
        const i = next++;
        await this.#create(jobs[i], tickets[i], tasks.get(jobs[i].taskId)?.role ?? "");
      }
    };
    await Promise.all(Array.from({ length: Math.min(CREATES_AT_ONCE, jobs.length) }, create));
  }

  /** Create one Job; give its task back when that fails. */
  async #create(
    j: { taskId: string; sessionId: string; name: string; deadlineS: number },
    ticket: string,
    role: string,
  ): Promise<void> {
    const o = this.#o;
    try {
      await o.api.createJob(jobManifest({
        settings: o.settings,
        namespace: o.api.namespace,
        runId: o.runId,
        taskId: j.taskId,
        role,
        sessionId: j.sessionId,
        ticket,
        serverUrl: o.serverUrl,
        cloneUrl: o.cloneUrl,
        activeDeadlineS: j.deadlineS,
        memoryMb: o.memoryMb,
        cpuCores: o.cpuCores,
        owner: o.owner,
      }));
      this.#reserved.set(j.taskId, j.sessionId);
      this.created++;
      o.log(`${j.taskId}: Job ${j.name} created in ${o.api.namespace} (session ${j.sessionId})`);
    } catch (e) {
      await o.tickets.revoke(j.sessionId).catch(() => {});
      this.#quietUntil = this.#clock() + Math.min(MAX_BACKOFF_MS, 5000 * 2 ** this.#lapses++);
      const fix = e instanceof KubeApiError && e.status === 403
        ? " (the orchestrator's service account needs the Role in deploy/: jobs create, list, delete)"
        : "";
      o.lapse(j.taskId, `could not create Job ${j.name}: ${(e as Error).message}${fix}`);
    }
  }

  /** Say once why a pod of the run waits (an image that does not pull, a missing Secret). */
  #sayPodWaits(pods: readonly ListedPod[]): void {
    for (const p of pods) {
      if (p.phase !== "Pending" || !p.reason || this.#said.get(p.job) === p.reason) continue;
      this.#said.set(p.job, p.reason);
      this.#o.log(`kubernetes: pod ${p.name} of Job ${p.job} waits: ${p.reason}`);
    }
  }
}
