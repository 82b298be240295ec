/**
 * The landing lane: the I/O that lands finished work — diff captures with their verification,
 * merges, rebases — runs off the loop, one operation at a time (they share the target branch
 * and the gates' machine). Work that is ready to land (a merge, a rebase) goes before captures
 * still waiting, so one task's work lands while others are still being captured.
 */
import type { CoreEvent } from "./core/protocol.ts";

/** One operation; its outcome becomes events of the loop. */
export type LaneWork = () => Promise<CoreEvent[]>;

/** Runs {@link LaneWork} one at a time, landing before capturing. */
export class LandingLane {
  readonly #land: LaneWork[] = [];
  readonly #capture: LaneWork[] = [];
  readonly #deliver: (events: CoreEvent[]) => void;
  readonly #fail: (message: string) => void;
  #running: Promise<void> | undefined;

  /** `deliver` receives each operation's events; `fail` the message of one that threw. */
  constructor(deliver: (events: CoreEvent[]) => void, fail: (message: string) => void) {
    this.#deliver = deliver;
    this.#fail = fail;
  }

  /** Queue `work`: `land` (a merge, a rebase) before `capture`. */
  add(kind: "land" | "capture", work: LaneWork): void {
    (kind === "land" ? this.#land : this.#capture).push(work);
    this.#running ??= this.#drain();
  }

  /** Resolves once every queued operation has run. */
  idle(): Promise<void> {
    return this.#running ?? Promise.resolve();
  }

  async #drain(): Promise<void> {
    for (let work; (work = this.#land.shift() ?? this.#capture.shift());) {
      try {
        this.#deliver(await work());
      } catch (e) {
        this.#fail(`landing step failed: ${(e as Error).message}`);
      }
    }
    this.#running = undefined;
  }
}
