/**
 * The live run's watch on the workers the server has heard from (lib/workers/registry.ts): the
 * scheduler is told the slots they offer (`workers_seen`, at most once a second), a worker that
 * registers says what it can and cannot start, an agent that did not start on a worker is
 * counted against the worker (and cordons it when repeated), and where a worker runs each
 * adapter's agents (`worktree`, `container:<runtime>:<image>`) is what the claim journals.
 */
import type { WorkersSeen } from "./lane_events.ts";
import { type WorkerRecord, workerSlots } from "./fleet.ts";
import { registryFor, type WorkerRegistry } from "./registry.ts";
import { printable } from "../util/printable.ts";

/** Options of {@link FleetWatch}. */
export interface FleetWatchOptions {
  root: string;
  push: (event: WorkersSeen) => void;
  log: (line: string) => void;
  clock: () => number;
}

/** How often the scheduler is told of the workers at most (ms). */
const TELL_MS = 1000;

/** The run's view of its workers. */
export class FleetWatch {
  readonly #o: FleetWatchOptions;
  #registry: WorkerRegistry | undefined;
  #unsubscribe: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #told = 0;
  #closed = false;

  constructor(options: FleetWatchOptions) {
    this.#o = options;
    registryFor(options.root).then((registry) => {
      if (this.#closed) return;
      this.#registry = registry;
      this.#unsubscribe = registry.subscribe(() => this.#tell());
      this.#tell(); // none registered is news too: with max_agents: 0 the run says so
    }).catch((e) => options.log(`workers: cannot read their registry: ${(e as Error).message}`));
  }

  #tell(): void {
    if (this.#closed || this.#timer) return;
    const wait = Math.max(0, this.#told + TELL_MS - this.#o.clock());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#told = this.#o.clock();
      if (this.#closed || !this.#registry) return;
      this.#o.push({ type: "workers_seen", workers: workerSlots(this.#registry.list()) });
    }, wait);
  }

  /** A worker registered: the run says what it offers and what it lacks. */
  registered(rec: WorkerRecord): void {
    const ready = (rec.adapters ?? []).filter((a) => a.ready).map((a) => a.name);
    const lacking = (rec.adapters ?? []).filter((a) => !a.ready);
    // A worker names itself and says what it lacks: escaped for the terminal.
    this.#o.log(printable(
      `worker ${rec.name} registered (${rec.slots} slot(s)` +
        `${rec.roles ? `, roles ${rec.roles.join(", ")}` : ""}` +
        `${rec.adapters ? `; can start ${ready.join(", ") || "no adapter"}` : ""})` +
        lacking.map((a) => `; cannot start ${a.name}: ${a.problem ?? "not ready"}`).join("") +
        (rec.cordoned ? `; cordoned: ${rec.cordoned.reason}` : ""),
    ));
  }

  /** Where `worker` runs `adapter`'s agents, as it said when it registered. */
  isolation(worker: string, adapter: string): string | undefined {
    return this.#registry?.get(worker)?.adapters?.find((a) => a.name === adapter)?.isolation;
  }

  /** An agent started on `worker`: its run of start failures ends. */
  started(worker: string): void {
    this.#registry?.started(worker);
  }

  /**
   * An agent of `adapter` did not start on `worker`: counted there (the adapter is taken as not
   * ready on it); the reason when this cordoned it.
   */
  async startFailed(worker: string, adapter: string, reason: string): Promise<string | undefined> {
    const registry = this.#registry ?? await registryFor(this.#o.root);
    const was = registry.get(worker)?.cordoned;
    const rec = registry.startFailed(worker, { adapter, reason, now: this.#o.clock() });
    return rec?.cordoned && !was ? rec.cordoned.reason : undefined;
  }

  /** The run ended. */
  close(): void {
    this.#closed = true;
    this.#unsubscribe?.();
    clearTimeout(this.#timer);
  }
}
