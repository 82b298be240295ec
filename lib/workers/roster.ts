/**
 * The workers a server has heard of (DESIGN.md §16, §17), in memory, per workspace: which
 * principal each name belongs to (a name is bound to the token that first used it, so one worker
 * cannot speak for another), when each was last heard of, how many slots it has free and whether
 * it is draining. `/metrics` counts the workers heard of within a lease and their free slots from
 * here. Names not heard of for {@link FORGET_AFTER_MS} (pods come and go under fresh names) are
 * forgotten, and a worker that stops says so (`/workers/<name>/leave`), so a name is free again.
 * The run's lost leases are counted here too: the counter outlives runs, as a counter must.
 */
import { DomainError } from "../errors.ts";
import type { Principal } from "../auth/tokens.ts";

/** A name not heard of for this long is forgotten (never sooner than two leases). */
export const FORGET_AFTER_MS = 10 * 60_000;

/** What the server knows of one worker. */
export interface WorkerEntry {
  name: string;
  /** The principal whose token the name is bound to. */
  principal: string;
  /** When it was last heard of (ms). */
  seenAt: number;
  /** Slots it said were free (its registration's, then its last claim's less what it got). */
  free: number;
  /** It is stopping (SIGTERM): it claims nothing more. */
  draining: boolean;
}

/** What a request of a worker says of it. */
export interface WorkerFacts {
  /** Slots free now. */
  free?: number;
  draining?: boolean;
}

/** The workers of one workspace's server, and its count of lost leases. */
export class WorkerRoster {
  readonly #workers = new Map<string, WorkerEntry>();
  readonly #clock: () => number;
  #leaseMs = 45_000;
  #leasesLost = 0;
  #prunedAt = 0;

  constructor(clock: () => number = Date.now) {
    this.#clock = clock;
  }

  /** The lease (`heartbeat_timeout_s`): a worker heard of within it is connected. */
  setLease(seconds: number): void {
    this.#leaseMs = seconds * 1000;
  }

  /**
   * `name` spoke with `principal`'s token: the name is bound to it on first use (another
   * principal's token is 403 `worker_name_taken`), and what it said is noted.
   */
  heard(name: string, principal: Principal, facts: WorkerFacts = {}): void {
    const now = this.#clock();
    this.#prune(now);
    const entry = this.#workers.get(name);
    if (entry && entry.principal !== principal.principal) {
      throw new DomainError(
        "forbidden",
        "worker_name_taken",
        `worker name ${JSON.stringify(name)} belongs to principal ` +
          `${JSON.stringify(entry.principal)}; give this worker its own --name`,
      );
    }
    const next: WorkerEntry = entry ??
      { name, principal: principal.principal, seenAt: now, free: 0, draining: false };
    next.seenAt = now;
    if (facts.free !== undefined) next.free = Math.max(0, facts.free);
    if (facts.draining !== undefined) next.draining = facts.draining;
    this.#workers.set(name, next);
  }

  /** A worker's session spoke (its capability names the worker): it is still there. */
  touched(name: string, facts: WorkerFacts = {}): void {
    const entry = this.#workers.get(name);
    if (!entry) return; // registered with an earlier server process: it claims here again later
    entry.seenAt = this.#clock();
    if (facts.draining !== undefined) entry.draining = facts.draining;
  }

  /** `name` stopped (its `leave`): forgotten now, its name free (false: not `principal`'s). */
  left(name: string, principal: Principal): boolean {
    const entry = this.#workers.get(name);
    if (!entry || entry.principal !== principal.principal) return false;
    this.#workers.delete(name);
    return true;
  }

  /** Workers heard of within a lease, by name. */
  connected(): WorkerEntry[] {
    const since = this.#clock() - this.#leaseMs;
    return [...this.#workers.values()].filter((w) => w.seenAt >= since)
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  /** A remote session's lease ran out (its worker stopped heartbeating). */
  leaseLost(): void {
    this.#leasesLost++;
  }

  /** Leases lost since this server process started. */
  get leasesLost(): number {
    return this.#leasesLost;
  }

  /** Forget names silent for long (at most once every ten seconds: a claim is hot). */
  #prune(now: number): void {
    if (now - this.#prunedAt < 10_000) return;
    this.#prunedAt = now;
    const before = now - Math.max(FORGET_AFTER_MS, 2 * this.#leaseMs);
    for (const [name, w] of this.#workers) if (w.seenAt < before) this.#workers.delete(name);
  }
}

const rosters = new Map<string, WorkerRoster>();

/** The roster of the workspace at `root` (made on first use). */
export function rosterFor(root: string): WorkerRoster {
  let roster = rosters.get(root);
  if (!roster) rosters.set(root, roster = new WorkerRoster());
  return roster;
}
