/**
 * The workers a workspace's server has heard from (`service workers`; DESIGN.md §16), kept in
 * memory by the server and in `.sdd/runtime/workers.json`, so an operator's cordon outlives a
 * restart and `service workers` reads the list when no server runs. The `/workers/` routes write
 * it (registration, claims, heartbeats, reports, an operator's cordon and drain); the live run's
 * desk listens, so the scheduler knows the slots workers offer. What follows from a record is
 * decided in fleet.ts.
 */
import { join } from "node:path";
import { workspacePaths } from "../workspace.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";
import { afterStartFailure, type WorkerRecord } from "./fleet.ts";
import type { RegisterBody } from "./protocol.ts";

/** How often a worker being heard from is written out at most (ms). */
const SEEN_WRITE_MS = 5_000;

/** The registry file of the workspace at `root`. */
export function registryPath(root: string): string {
  return join(workspacePaths(root).runtime, "workers.json");
}

/** Read the registry file (none, or unreadable: no workers known). */
export async function readWorkerRecords(root: string): Promise<WorkerRecord[]> {
  try {
    const parsed = JSON.parse(await Deno.readTextFile(registryPath(root)));
    return Array.isArray(parsed?.workers) ? parsed.workers as WorkerRecord[] : [];
  } catch {
    return [];
  }
}

/** The workers of one workspace. */
export class WorkerRegistry {
  readonly #root: string;
  readonly #records = new Map<string, WorkerRecord>();
  readonly #listeners = new Set<() => void>();
  #writing: Promise<void> = Promise.resolve();
  #lastWrite = 0;
  #pending: ReturnType<typeof setTimeout> | undefined;

  private constructor(root: string, records: WorkerRecord[]) {
    this.#root = root;
    for (const r of records) this.#records.set(r.name, r);
  }

  /** The registry of `root`, loaded from its file. */
  static async load(root: string): Promise<WorkerRegistry> {
    return new WorkerRegistry(root, await readWorkerRecords(root));
  }

  /** Every worker, by name. */
  list(): WorkerRecord[] {
    return [...this.#records.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** One worker. */
  get(name: string): WorkerRecord | undefined {
    return this.#records.get(name);
  }

  /** Told after every change and sighting (the live run's desk recounts the slots). */
  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A worker process registered: what it offers now (an operator's cordon stays). */
  register(
    name: string,
    body: RegisterBody,
    { principal, now }: { principal: string; now: number },
  ): WorkerRecord {
    const was = this.#records.get(name);
    const rec: WorkerRecord = {
      name,
      principal,
      slots: body.slots,
      ...(body.roles ? { roles: body.roles } : {}),
      ...(body.adapters ? { adapters: body.adapters } : {}),
      registered_at: new Date(now).toISOString(),
      last_seen: now,
      free: body.slots,
      running: 0,
      start_failures: 0,
      failures_total: was?.failures_total ?? 0,
      ...(was?.last_failure ? { last_failure: was.last_failure } : {}),
      ...(was?.cordoned ? { cordoned: was.cordoned } : {}),
    };
    this.#set(rec, true);
    return rec;
  }

  /**
   * `name` stopped (its `leave`): forgotten, so a pod's one-time name does not stay listed — unless
   * it is cordoned, which stays until an operator uncordons it.
   */
  left(name: string): void {
    const rec = this.#records.get(name);
    if (!rec || rec.cordoned) return;
    this.#records.delete(name);
    for (const l of this.#listeners) l();
    this.#write(true);
  }

  /** `name` was heard from (`free` slots when it asked for tasks, `running` in a heartbeat). */
  seen(name: string, now: number, what: { free?: number; running?: number } = {}): void {
    const rec = this.#records.get(name);
    if (!rec) return;
    const changed = (what.free !== undefined && what.free !== rec.free) ||
      (what.running !== undefined && what.running !== rec.running);
    this.#set({ ...rec, last_seen: now, ...what }, changed);
  }

  /** An agent started on `name`: its run of start failures ends. */
  started(name: string): void {
    const rec = this.#records.get(name);
    if (rec && rec.start_failures > 0) this.#set({ ...rec, start_failures: 0 }, true);
  }

  /** An agent of `adapter` did not start on `name`: counted (repeated, it cordons the worker). */
  startFailed(
    name: string,
    { adapter, reason, now }: { adapter: string; reason: string; now: number },
  ): WorkerRecord | undefined {
    const rec = this.#records.get(name);
    if (!rec) return undefined;
    const said = adapter ? `${adapter}: ${reason}` : reason;
    const next = afterStartFailure(rec, said, new Date(now).toISOString());
    this.#set(next, true);
    return next;
  }

  /** An operator cordons `name` (no task reaches it); false when no such worker is known. */
  cordon(
    name: string,
    { reason, by, now }: { reason: string; by: string; now: number },
  ): WorkerRecord | undefined {
    const rec = this.#records.get(name);
    if (!rec) return undefined;
    const next = { ...rec, cordoned: { reason, by, at: new Date(now).toISOString() } };
    this.#set(next, true);
    return next;
  }

  /** An operator lifts the cordon (and any drain) of `name`. */
  uncordon(name: string): WorkerRecord | undefined {
    const rec = this.#records.get(name);
    if (!rec) return undefined;
    const { cordoned: _c, draining: _d, ...rest } = rec;
    const next = { ...rest, start_failures: 0 };
    this.#set(next, true);
    return next;
  }

  /** An operator drains `name`: it claims nothing more and ends once its agents are done. */
  drain(name: string, by: string, now: number): WorkerRecord | undefined {
    const rec = this.#records.get(name);
    if (!rec) return undefined;
    const next = { ...rec, draining: { by, at: new Date(now).toISOString() } };
    this.#set(next, true);
    return next;
  }

  #set(rec: WorkerRecord, changed: boolean): void {
    this.#records.set(rec.name, rec);
    // Told of sightings too (a worker stays connected by being heard from); listeners throttle.
    for (const l of this.#listeners) l();
    this.#write(changed);
  }

  /** Write the file: at once after a change, at most every few seconds for mere sightings. */
  #write(now: boolean): void {
    if (!now && Date.now() - this.#lastWrite < SEEN_WRITE_MS) {
      this.#pending ??= setTimeout(() => {
        this.#pending = undefined;
        this.#write(true);
      }, SEEN_WRITE_MS);
      Deno.unrefTimer(this.#pending);
      return;
    }
    this.#lastWrite = Date.now();
    const text = JSON.stringify({ workers: this.list() }, null, 2) + "\n";
    this.#writing = this.#writing.then(async () => {
      await Deno.mkdir(workspacePaths(this.#root).runtime, { recursive: true });
      await writeFileAtomic(registryPath(this.#root), new TextEncoder().encode(text));
    }).catch(() => {});
  }

  /** Resolves once every write asked for so far is on disk. */
  flushed(): Promise<void> {
    if (this.#pending) {
      clearTimeout(this.#pending);
      this.#pending = undefined;
      this.#write(true);
    }
    return this.#writing;
  }
}

const registries = new Map<string, Promise<WorkerRegistry>>();

/** The registry of the workspace at `root` (one per process). */
export function registryFor(root: string): Promise<WorkerRegistry> {
  let r = registries.get(root);
  if (!r) {
    r = WorkerRegistry.load(root);
    registries.set(root, r);
  }
  return r;
}
