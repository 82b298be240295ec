/**
 * The integration lane: the I/O that lands finished work runs off the loop in two stages. Diff
 * captures with their verification (completion signals, gates on the candidate tree, evidence,
 * the ledger record) touch only the task's own worktree and scratch trees, so several run at
 * once (bounded). Merges and rebases move the target branch, so they run one at a time, in the
 * order they were asked for — except that every merge waiting when the lane is free lands
 * together, as one train (lib/merge/train.ts), their events delivered in that order. The lane is
 * free for the next train as soon as a train's candidates are prepared (merged and gated, not
 * landed): the next one is prepared on top of them while it lands (lib/merge/merge.ts), and
 * lands after it. A rebase waits until every train before it has landed.
 *
 * Three words, three things: *integration* is this lane, which brings finished work onto the
 * target either way; *merge-in* moves a local target branch (lib/merge/merge_in.ts); *landing*
 * is through a pull request on a host (lib/landing).
 */
import { Bounded } from "../async/bounded.ts";

/** One operation; its outcome becomes events of the loop (`E`: the loop's event type). */
export type LaneWork<E> = () => Promise<E[]>;

/** What the lane does with its outcomes, and how it lands. */
export interface IntegrationLaneOptions<E> {
  /** Receives each operation's events. */
  deliver: (events: E[]) => void;
  /** Receives the message of an operation that threw. */
  fail: (message: string) => void;
  /** How many verifications may run at once. */
  verifications: number;
  /**
   * Land these tasks' work as one train; a `merge_result` per task, in their order. It calls
   * `prepared` once its candidates are made and gated, if it can land after a train started then.
   */
  merge: (taskIds: string[], prepared: () => void) => Promise<E[]>;
}

/** Runs verifications side by side and merges and rebases one at a time. */
export class IntegrationLane<E> {
  readonly #o: IntegrationLaneOptions<E>;
  readonly #verify: Bounded;
  /** Waiting for the lane: a task to merge, or other work (a rebase). */
  readonly #waiting: (string | LaneWork<E>)[] = [];
  #draining: Promise<void> | undefined;

  constructor(options: IntegrationLaneOptions<E>) {
    this.#o = options;
    this.#verify = new Bounded(options.verifications);
  }

  /** Capture and verify beside the others (at most `verifications` at once). */
  verify(work: LaneWork<E>): void {
    this.#verify.run(work).then(this.#o.deliver, (e) => this.#failed(e));
  }

  /** Merge `taskId`'s work once the lane is free (with every other merge waiting then). */
  merge(taskId: string): void {
    this.#enqueue(taskId);
  }

  /** Run `work` (a rebase) once the lane is free. */
  rebase(work: LaneWork<E>): void {
    this.#enqueue(work);
  }

  /** Resolves once every operation queued so far has run. */
  async idle(): Promise<void> {
    await Promise.all([this.#verify.idle(), this.#draining]);
  }

  #enqueue(item: string | LaneWork<E>): void {
    this.#waiting.push(item);
    this.#draining ??= this.#drain();
  }

  async #drain(): Promise<void> {
    /** The trains started so far, delivered in order. */
    let landed: Promise<void> = Promise.resolve();
    do {
      while (this.#waiting.length > 0) {
        const next = this.#waiting[0];
        if (typeof next !== "string") {
          await landed; // a rebase works from the tip every train before it left
          this.#waiting.shift();
          try {
            this.#o.deliver(await next());
          } catch (e) {
            this.#failed(e);
          }
          continue;
        }
        const train = this.#waiting.filter((l): l is string => typeof l === "string");
        this.#waiting.splice(0, this.#waiting.length, ...this.#waiting.filter(isWork));
        let prepared!: () => void;
        const ready = new Promise<void>((resolve) => prepared = resolve);
        const merged = Promise.resolve().then(() => this.#o.merge(train, prepared)).then(
          (events) => () => this.#o.deliver(events),
          (e) => () => this.#failed(e),
        );
        const before = landed;
        landed = before.then(() => merged).then((report) => report()).catch((e) => this.#failed(e));
        // The next train starts once this one is prepared and the one before it has landed.
        await Promise.all([before, Promise.race([ready, landed])]);
      }
      await landed;
    } while (this.#waiting.length > 0);
    this.#draining = undefined;
  }

  #failed(e: unknown): void {
    this.#o.fail(`integration step failed: ${(e as Error).message}`);
  }
}

function isWork<E>(item: string | LaneWork<E>): item is LaneWork<E> {
  return typeof item !== "string";
}
