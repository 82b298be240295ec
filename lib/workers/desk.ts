/**
 * Where the routes under `/workers/` find the live run of their workspace: the orchestrator of
 * `service run` opens its desk while its loop runs (lib/workers/remote_work.ts) and closes
 * it when the loop ends. Without a live run a worker's claim gets nothing and a report is asked
 * to come again (503), so nothing a worker says is lost while the orchestrator restarts.
 */
import type { ClaimBody, LeftSession, ReportAnswer, ReportBody, WorkOrder } from "./protocol.ts";
import type { WorkerRecord } from "./fleet.ts";

/** The live run's side of the worker protocol. */
export interface WorkerDesk {
  /** The run being served. */
  readonly runId: string;
  /**
   * Tasks for `worker` now (none when nothing may start); `offer` says which adapters it can
   * start (lib/workers/fleet.ts).
   */
  claim(
    worker: string,
    body: ClaimBody,
    offer?: { adapters?: string[] },
  ): Promise<WorkOrder[]>;
  /**
   * Sessions of `worker` a live process still renews that a process registering under its name
   * does not hand back (`left`): the name is in use elsewhere.
   */
  liveElsewhere?(worker: string, left: LeftSession[]): string[];
  /** A worker process registered: the sessions its name held are handed back. */
  registered?(worker: string, record: WorkerRecord, left: LeftSession[]): void;
  /** Why the run wants `sessionId`'s agent ended (timeout, stop, cancel), if it does. */
  ending(sessionId: string): string | undefined;
  /** `worker` was heard from about `sessionId`, having pushed `pushed`. */
  touched(worker: string, taskId: string, sessionId: string, pushed?: string): void;
  /** A session ended on `worker`: fetch, verify, and hand its outcome to the loop. */
  report(worker: string, body: ReportBody): Promise<ReportAnswer>;
}

const desks = new Map<string, WorkerDesk>();

/** Open `desk` for the workspace at `root`; the returned function closes it. */
export function openDesk(root: string, desk: WorkerDesk): () => void {
  desks.set(root, desk);
  return () => {
    if (desks.get(root) === desk) desks.delete(root);
  };
}

/** The live run's desk of the workspace at `root`, if a run is live. */
export function deskFor(root: string): WorkerDesk | undefined {
  return desks.get(root);
}
