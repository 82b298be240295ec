/**
 * What the launcher does with the Jobs it lists (pure; DESIGN.md §17). The Jobs of the run are
 * read back by their labels on every pass — never counted in memory — and each is judged
 * against its task in the store:
 *
 * 1. A live Job counts against `max_in_flight`; one whose task was cancelled, finished by
 *    another session or is gone is deleted; one for an OPEN task that no Job is reserved for
 *    (an earlier process made it) is adopted, and a second one for the same task is deleted.
 * 2. A finished Job whose pod still holds its task's lease means the pod is gone without its
 *    report: that session is lost now (not a heartbeat timeout later). One whose pod never
 *    claimed its task gives the task back (it lapsed) with the pod's reason.
 * 3. A finished Job older than `ttl_after_finished_s` is deleted (the TTL controller would; this
 *    keeps a cluster without it, and the count, clean).
 */

/** A Job as the launcher reads it back. */
export interface ListedJob {
  name: string;
  /** Exact ids, from its annotations. */
  runId: string;
  taskId: string;
  sessionId: string;
  /** Its terminal condition, once it has one. */
  outcome?: "succeeded" | "failed";
  /** The terminal condition's reason and message (`DeadlineExceeded: …`). */
  reason?: string;
  /** When it finished (ms). */
  finishedAt?: number;
  /** Deletion has begun (`metadata.deletionTimestamp`). */
  deleting: boolean;
}

/** A pod of a Job, for the words of what happened to it. */
export interface ListedPod {
  name: string;
  job: string;
  phase: string;
  /** Why it waits or how it ended (`ImagePullBackOff`, `OOMKilled (exit 137)` …). */
  reason?: string;
}

/** What the plan needs of a task (the store's record). */
export interface TaskLease {
  status: string;
  session_id?: string | null;
  worker?: string | null;
}

/** Inputs of one pass. */
export interface PlanInput {
  jobs: readonly ListedJob[];
  pods: readonly ListedPod[];
  tasks: ReadonlyMap<string, TaskLease>;
  /** The session each task is reserved for in this process (its Job's pod has not claimed it). */
  reserved: ReadonlyMap<string, string>;
  maxInFlight: number;
  now: number;
  ttlAfterFinishedMs: number;
}

/** What to do now. */
export interface JobPlan {
  /** Jobs that may be created now. */
  free: number;
  /** Jobs live now (counted against `max_in_flight`). */
  inFlight: number;
  delete: { job: string; reason: string }[];
  /** Reserved tasks whose Job ended before its pod claimed them: ready again. */
  lapsed: { taskId: string; sessionId: string; job: string; reason: string }[];
  /** Sessions whose pod ended while it held its task. */
  lost: { taskId: string; sessionId: string; job: string; reason: string }[];
  /** OPEN tasks with a live Job this process did not reserve: reserve them for it. */
  adopt: { taskId: string; sessionId: string; job: string }[];
}

const HOLDS = new Set(["CLAIMED", "IN_PROGRESS"]);
const GONE = new Set(["CANCELLED", "FAILED", "CLOSED"]);

/** The words for how `job` ended: its condition, and its pod's own reason. */
export function endWords(job: ListedJob, pods: readonly ListedPod[]): string {
  const pod = pods.find((p) => p.job === job.name && p.reason);
  const condition = job.reason ?? (job.outcome === "succeeded" ? "Complete" : "Failed");
  return `Job ${job.name} ${job.outcome === "succeeded" ? "completed" : "failed"} (${condition}` +
    `${pod ? `; pod ${pod.name}: ${pod.reason}` : ""})`;
}

/** Decide one pass. */
export function planJobs(input: PlanInput): JobPlan {
  const plan: JobPlan = { free: 0, inFlight: 0, delete: [], lapsed: [], lost: [], adopt: [] };
  const reserved = new Map(input.reserved);
  // Oldest first is not knowable from names: a reservation of this process wins, then the first.
  const jobs = [...input.jobs].filter((j) => !j.deleting);
  for (const job of jobs) {
    const task = input.tasks.get(job.taskId);
    const held = task !== undefined && task.session_id === job.sessionId && HOLDS.has(task.status);
    if (job.outcome === undefined) {
      const why = liveJobProblem(job, task, held, reserved);
      if (why) {
        plan.delete.push({ job: job.name, reason: why });
        continue;
      }
      plan.inFlight++;
      if (task?.status === "OPEN" && !reserved.has(job.taskId)) {
        reserved.set(job.taskId, job.sessionId);
        plan.adopt.push({ taskId: job.taskId, sessionId: job.sessionId, job: job.name });
      }
      continue;
    }
    const words = endWords(job, input.pods);
    if (held) {
      plan.lost.push({
        taskId: job.taskId,
        sessionId: job.sessionId,
        job: job.name,
        reason: `${words} while its session held the task`,
      });
    } else if (reserved.get(job.taskId) === job.sessionId && task?.status === "OPEN") {
      reserved.delete(job.taskId);
      plan.lapsed.push({
        taskId: job.taskId,
        sessionId: job.sessionId,
        job: job.name,
        reason: `${words} before its pod claimed the task; a new Job follows`,
      });
    }
    if (job.finishedAt !== undefined && input.now - job.finishedAt >= input.ttlAfterFinishedMs) {
      plan.delete.push({ job: job.name, reason: "finished longer ago than ttl_after_finished_s" });
    }
  }
  plan.free = Math.max(0, input.maxInFlight - plan.inFlight);
  return plan;
}

/** Why a live Job should not go on, if it should not. */
function liveJobProblem(
  job: ListedJob,
  task: TaskLease | undefined,
  held: boolean,
  reserved: ReadonlyMap<string, string>,
): string | undefined {
  if (!task) return `its task ${job.taskId} is not in this run`;
  if (task.status === "CANCELLED") return `its task ${job.taskId} was cancelled`;
  if (held || (task.status === "DONE" && task.session_id === job.sessionId)) return undefined;
  if (GONE.has(task.status) || task.status === "DONE") {
    return `its task ${job.taskId} is ${task.status}`;
  }
  if (task.status === "OPEN") {
    const mine = reserved.get(job.taskId);
    return mine !== undefined && mine !== job.sessionId
      ? `another Job is reserved for task ${job.taskId}`
      : undefined;
  }
  // CLAIMED or IN_PROGRESS by another session, ORPHANED, BLOCKED: this Job's pod has no part.
  return task.session_id && task.session_id !== job.sessionId
    ? `task ${job.taskId} is ${task.status} under session ${task.session_id}`
    : task.status === "BLOCKED"
    ? `task ${job.taskId} is BLOCKED`
    : undefined;
}
