/**
 * The orchestrator's view of its remote workers (pure): what it remembers of each (its slots,
 * roles, the adapters it can start, when it was last heard from, the agents that did not start
 * on it, an operator's cordon or drain), and what follows from that at a given moment — whether
 * it is connected, the state `service workers` shows, when repeated start failures cordon it, and
 * the slots the scheduler may count on.
 */
import type { AdapterReadiness } from "./protocol.ts";

/** What the orchestrator remembers of one worker (`.sdd/runtime/workers.json`). */
export interface WorkerRecord {
  name: string;
  /** The token's principal that first used the name. */
  principal: string;
  slots: number;
  /** Roles it takes (any when absent). */
  roles?: string[];
  /** The adapters it can and cannot start, as it checked them when it registered. */
  adapters?: AdapterReadiness[];
  /** When its process registered (ISO). */
  registered_at: string;
  /** When it was last heard from: a registration, claim, heartbeat or report (epoch ms). */
  last_seen: number;
  /** Free slots it named when it last asked for tasks. */
  free: number;
  /** Sessions it named in its last heartbeat. */
  running: number;
  /** Agents in a row that did not start on it (a start resets it). */
  start_failures: number;
  /** Agents that did not start on it, in all. */
  failures_total: number;
  /** Why the last one did not start. */
  last_failure?: string;
  /** It gets no task until an operator uncordons it. */
  cordoned?: { reason: string; by: string; at: string };
  /** It claims nothing more and ends once its agents are done. */
  draining?: { by: string; at: string };
}

/** Whether a worker offering `w` can start agents of `adapter` (pure). */
export function canStart(w: Pick<WorkerSlots, "adapters">, adapter: string): boolean {
  return !w.adapters || w.adapters.includes(adapter);
}

/** Agents in a row that may fail to start on a worker before it is cordoned. */
export const CORDON_AFTER_START_FAILURES = 3;

/** What `service workers` says of a worker's state. */
export type WorkerState =
  | "idle"
  | "busy"
  | "cordoned"
  | "draining"
  /** Not heard from for a heartbeat interval and more: it may be gone. */
  | "silent"
  /** Not heard from for a lease: its sessions were (or will be) taken back. */
  | "gone";

/** A worker as shown at `now`. */
export interface WorkerView extends WorkerRecord {
  state: WorkerState;
  /** Seconds since it was last heard from. */
  heartbeat_age_s: number;
  connected: boolean;
}

/** The state of `rec` at `now` (ms) under leases of `timeoutS` seconds. */
export function workerView(rec: WorkerRecord, now: number, timeoutS: number): WorkerView {
  const age = Math.max(0, Math.round((now - rec.last_seen) / 1000));
  const connected = now - rec.last_seen < timeoutS * 1000;
  // Heartbeats come three times a lease (protocol.ts): two missed ones make it silent.
  const silent = now - rec.last_seen > (2 * timeoutS * 1000) / 3;
  const state: WorkerState = !connected
    ? "gone"
    : rec.cordoned
    ? "cordoned"
    : rec.draining
    ? "draining"
    : silent
    ? "silent"
    : rec.running > 0
    ? "busy"
    : "idle";
  return { ...rec, state, heartbeat_age_s: age, connected };
}

/** The adapters `rec` can start (undefined: it did not say, so any it has not failed). */
export function readyAdapters(rec: WorkerRecord): Set<string> | undefined {
  if (!rec.adapters) return undefined;
  return new Set(
    rec.adapters.filter((a) => a.ready).map((a) => a.name),
  );
}

/**
 * An agent did not start on `rec`: its counts, and the cordon that follows the
 * {@link CORDON_AFTER_START_FAILURES}th in a row (never over an operator's own cordon).
 */
export function afterStartFailure(
  rec: WorkerRecord,
  reason: string,
  at: string,
  { limit = CORDON_AFTER_START_FAILURES }: { limit?: number } = {},
): WorkerRecord {
  const failures = rec.start_failures + 1;
  const next: WorkerRecord = {
    ...rec,
    start_failures: failures,
    failures_total: rec.failures_total + 1,
    last_failure: reason,
  };
  if (failures >= limit && !rec.cordoned) {
    next.cordoned = {
      reason: `${failures} agents in a row did not start on it; the last: ${reason}`,
      by: "service",
      at,
    };
  }
  return next;
}

/** Whether `rec` may be handed tasks now. */
export function mayClaim(rec: WorkerRecord | undefined): boolean {
  return !rec?.cordoned && !rec?.draining;
}

/** One worker's slots as the scheduler counts them (lib/orchestrator/schedule.ts). */
export interface WorkerSlots {
  name: string;
  roles?: string[];
  slots: number;
  free: number;
  /** When it was last heard from (ms): the core counts it while within a lease. */
  seen: number;
  /** The adapters it can start (absent: any). */
  adapters?: string[];
  /** It takes no task (cordoned or draining). */
  closed?: boolean;
}

/** What the scheduler needs of the registry's workers. */
export function workerSlots(records: readonly WorkerRecord[]): WorkerSlots[] {
  return records.map((r) => {
    const ready = readyAdapters(r);
    return {
      name: r.name,
      ...(r.roles ? { roles: r.roles } : {}),
      slots: r.slots,
      free: r.free,
      seen: r.last_seen,
      ...(ready ? { adapters: [...ready] } : {}),
      ...(mayClaim(r) ? {} : { closed: true }),
    };
  });
}

/** A remote agent's lease as `ps` shows it: how long since its worker renewed it, and so what. */
export interface LeaseView {
  /** Seconds since the last heartbeat (null: none recorded). */
  heartbeat_age_s: number | null;
  /**
   * `running` while heartbeats come; `silent` after two missed ones (its worker may be gone);
   * `lease expired` after a lease without one (the task is taken back).
   */
  state: "running" | "silent" | "lease expired";
}

/** The lease of a remote agent whose last heartbeat was at `heartbeatAt` (pure). */
export function leaseView(heartbeatAt: string | null, now: number, timeoutS: number): LeaseView {
  const at = heartbeatAt ? Date.parse(heartbeatAt) : NaN;
  if (!Number.isFinite(at)) return { heartbeat_age_s: null, state: "running" };
  const ms = Math.max(0, now - at);
  const state = ms >= timeoutS * 1000
    ? "lease expired"
    : ms > (2 * timeoutS * 1000) / 3
    ? "silent"
    : "running";
  return { heartbeat_age_s: Math.round(ms / 1000), state };
}
