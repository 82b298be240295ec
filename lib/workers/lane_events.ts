/**
 * What the run's remote-worker lane tells the run loop, and the one action the loop answers a
 * worker with: a worker asks for tasks (answered by a `dispatch`), the workers the server heard
 * from, a session that did not start on its worker, a session an earlier process started. The
 * agents' own events (spawned, exited …) are the agent lane's (lib/agent_session/events.ts).
 */
import type { WorkerSlots } from "./fleet.ts";

export type { WorkerSlots };

/**
 * A remote worker asks for up to `free` tasks (of `roles`, any when absent); answered by one
 * `dispatch` action naming the tasks it gets (none, when nothing may start).
 */
export interface WorkerAsks {
  type: "worker_asks";
  requestId: string;
  worker: string;
  free: number;
  roles?: string[];
  /** The adapters it can start (absent: any; lib/workers/fleet.ts). */
  offer?: { adapters?: string[] };
  /** A claim ticket's task (DESIGN.md §17): that task only, or none. */
  task?: string;
  /**
   * The Kubernetes launcher asks: the tasks it gets are reserved for the Jobs it creates
   * (`launching`), not claimed; each Job's pod claims its own with a ticket.
   */
  reserve?: boolean;
}

/** The remote workers the server has heard from, as the scheduler counts them. */
export interface WorkersSeen {
  type: "workers_seen";
  workers: WorkerSlots[];
}

/**
 * A remote session's agent did not start on its worker (its CLI, key, image or launch): the
 * worker's fault, not the task's — no attempt counted, and the task goes to another worker.
 */
export interface RemoteStartFailed {
  type: "remote_start_failed";
  taskId: string;
  sessionId: string;
  worker: string;
  reason: string;
  /** The worker was cordoned for it (repeated failures): why. */
  cordoned?: string;
}

/**
 * A remote session an earlier process started is still held by its worker (its lease lives
 * in the task store): the run waits for its report as for any agent.
 */
export interface RemoteAdopted {
  type: "remote_adopted";
  taskId: string;
  sessionId: string;
  worker: string;
  startedAt: number;
  deadline: number;
}

/**
 * Hand `tasks` to `worker`'s request `requestId` (claim each, publish its base, answer the
 * request); then `spawned` (with `worker`) or `claim_lost` each. No tasks: the answer is 204.
 */
export interface Dispatch {
  kind: "dispatch";
  requestId: string;
  worker: string;
  tasks: { taskId: string; adapter: string; note?: string }[];
  /** The launcher's request: the tasks are reserved for Jobs, nothing is claimed. */
  reserve?: boolean;
}

/** An event of the remote-worker lane, for the run loop's decision core. */
export type WorkerLaneEvent = WorkerAsks | WorkersSeen | RemoteStartFailed | RemoteAdopted;
