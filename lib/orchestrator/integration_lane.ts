/**
 * The landing lane: the I/O that lands finished work runs off the loop in two stages. Diff
 * captures with their verification (completion signals, gates on the candidate tree, evidence,
 * the ledger record) touch only the task's own worktree and scratch trees, so several run at
 * once (bounded). Merges and rebases move the target branch, so they run one at a time, in the
 * order they were asked for — except that every merge waiting when the lane is free lands
 * together, as one train (lib/merge/train.ts), their events delivered in that order.
 */
import { Bounded } from "../async/bounded.ts";
import type { CoreEvent } from "./core/protocol.ts";

/** One operation; its outcome becomes events of the loop. */
export type LaneWork = () => Promise<CoreEvent[]>;

/** What the lane does with its outcomes, and how it lands. */
export interface LandingLaneOptions {
  /** Receives each operation's events. */
  deliver: (events: CoreEvent[]) => void;
  /** Receives the message of an operation that threw. */
  fail: (message: string) => void;
  /** How many verifications may run at once. */
  verifications: number;
  /** Land these tasks' work as one train; a `merge_result` per task, in their order. */
  merge: (taskIds: string[]) => Promise<CoreEvent[]>;
}

/** Runs verifications side by side and landings one at a time. */
export class LandingLane {
  readonly #o: LandingLaneOptions;
  readonly #verify: Bounded;
  /** Landings waiting for the lane: a task to merge, or other work (a rebase). */
  readonly #landings: (string | LaneWork)[] = [];
  #draining: Promise<void> | undefined;

  constructor(options: LandingLaneOptions) {
    this.#o = options;
    this.#verify = new Bounded(options.verifications);
  }

  /** Capture and verify beside the others (at most `verifications` at once). */
  verify(work: LaneWork): void {
    this.#verify.run(work).then(this.#o.deliver, (e) => this.#failed(e));
  }

  /** Merge `taskId`'s work once the lane is free (with every other merge waiting then). */
  merge(taskId: string): void {
    this.#land(taskId);
  }

  /** Run `work` (a rebase) once the lane is free. */
  land(work: LaneWork): void {
    this.#land(work);
  }

  /** Resolves once every operation queued so far has run. */
  async idle(): Promise<void> {
    await Promise.all([this.#verify.idle(), this.#draining]);
  }

  #land(item: string | LaneWork): void {
    this.#landings.push(item);
    this.#draining ??= this.#drain();
  }

  async #drain(): Promise<void> {
    while (this.#landings.length > 0) {
      const next = this.#landings[0];
      try {
        if (typeof next === "string") {
          const train = this.#landings.filter((l): l is string => typeof l === "string");
          this.#landings.splice(0, this.#landings.length, ...this.#landings.filter(isWork));
          this.#o.deliver(await this.#o.merge(train));
        } else {
          this.#landings.shift();
          this.#o.deliver(await next());
        }
      } catch (e) {
        this.#failed(e);
      }
    }
    this.#draining = undefined;
  }

  #failed(e: unknown): void {
    this.#o.fail(`landing step failed: ${(e as Error).message}`);
  }
}

function isWork(item: string | LaneWork): item is LaneWork {
  return typeof item !== "string";
}
