/**
 * One poller for every open pull request of a run. Each round looks at each watched pull request
 * (conditional requests: an unchanged one costs GitHub no rate limit) and tells the run when what
 * the host says of it changed; a task whose last step failed on the host is told again when its
 * retry is due. Rounds come every interval, sooner when a webhook says something happened
 * ({@link PrPoller.wake}); failed rounds back off and honour `Retry-After` and exhausted
 * rate-limit windows (the trackers' policy, lib/trackers/http.ts). The host blinking never ends
 * a task: the next round simply tries again.
 */
import { nextPollDelay, type RateLimit, TrackerApiError } from "../trackers/http.ts";

/** What the poller needs. */
export interface PrPollerOptions {
  /** Between rounds when nothing fails. */
  intervalMs: number;
  /** A digest of what the host says of pull request `number` now (changes when anything does). */
  look: (number: number) => Promise<string>;
  /** Told when a watched pull request changed, or a retry is due. */
  onChange: (taskId: string) => void;
  /** The last rate-limit facts of the host (for the back-off). */
  rate: () => RateLimit;
  warn: (line: string) => void;
  now?: () => number;
}

interface Watched {
  number?: number;
  digest?: string;
  /** Tell the run at this time (a step that failed on the host). */
  retryAt?: number;
}

/** Shortest time between two rounds a flurry of webhook deliveries can cause. */
const WAKE_COALESCE_MS = 200;

/** Watches the run's open pull requests. */
export class PrPoller {
  readonly #o: PrPollerOptions;
  readonly #watched = new Map<string, Watched>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #round: Promise<void> | undefined;
  #failures = 0;
  #stopped = true;
  #again = false;
  /** When the scheduled round runs. */
  #dueAt: number | undefined;

  constructor(options: PrPollerOptions) {
    this.#o = options;
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  /** Start the rounds. */
  start(): void {
    this.#stopped = false;
    this.#schedule(this.#o.intervalMs);
  }

  /** Stop; resolves when a round under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#round;
  }

  /** Watch `taskId`'s pull request `number`; `digest` is what the run just saw of it. */
  watch(taskId: string, number: number, digest: string): void {
    this.#watched.set(taskId, { number, digest });
  }

  /** Tell the run about `taskId` again in `delayMs` (its step failed on the host). */
  retry(taskId: string, delayMs: number): void {
    const w = this.#watched.get(taskId) ?? {};
    this.#watched.set(taskId, { ...w, retryAt: this.#now() + delayMs });
    this.#schedule(Math.min(delayMs, this.#o.intervalMs));
  }

  /** Stop watching `taskId` (merged, closed, or its landing ended). */
  forget(taskId: string): void {
    this.#watched.delete(taskId);
  }

  /** Tasks watched now. */
  watching(): string[] {
    return [...this.#watched.keys()];
  }

  /** Look now (a webhook said something changed on the host). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#round) {
      this.#again = true; // the round under way may have read before the change
      return;
    }
    this.#schedule(WAKE_COALESCE_MS);
  }

  /** A delay for the retry of a step that failed with `error` (its Retry-After, else back-off). */
  retryDelay(error: unknown, failures: number): number {
    const rate = error instanceof TrackerApiError ? error.rate : this.#o.rate();
    return nextPollDelay({
      intervalMs: this.#o.intervalMs,
      nowMs: this.#now(),
      failures: Math.max(1, failures),
      rate,
    });
  }

  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    const at = this.#now() + delayMs;
    if (this.#timer !== undefined && this.#dueAt !== undefined && this.#dueAt <= at) return;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#dueAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#dueAt = undefined;
      this.#round = this.#runRound().finally(() => {
        this.#round = undefined;
        if (this.#again) {
          this.#again = false;
          this.#schedule(0);
        }
      });
    }, Math.max(0, delayMs));
  }

  async #runRound(): Promise<void> {
    let failed: unknown;
    for (const [taskId, w] of [...this.#watched]) {
      if (this.#stopped) return;
      if (w.retryAt !== undefined && w.retryAt <= this.#now()) {
        this.#watched.set(taskId, { ...w, retryAt: undefined });
        this.#o.onChange(taskId);
        continue;
      }
      if (w.number === undefined) continue;
      try {
        const digest = await this.#o.look(w.number);
        const now = this.#watched.get(taskId);
        if (now && now.number === w.number && now.digest !== digest) {
          this.#watched.set(taskId, { ...now, digest });
          this.#o.onChange(taskId);
        }
      } catch (e) {
        failed = e;
        break; // the host is down or limits us: the next round, later, looks again
      }
    }
    if (failed === undefined) {
      this.#failures = 0;
      const due = [...this.#watched.values()].flatMap((w) => w.retryAt ?? []);
      const next = Math.min(this.#o.intervalMs, ...due.map((t) => Math.max(0, t - this.#now())));
      this.#schedule(next);
      return;
    }
    this.#failures++;
    const delay = this.retryDelay(failed, this.#failures);
    this.#o.warn(
      `looking at open pull requests failed (${(failed as Error).message}); next look in ${
        Math.round(delay / 1000)
      } s`,
    );
    this.#schedule(delay);
  }
}
