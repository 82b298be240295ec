/**
 * One poller for every open pull request of a run. Each pull request is looked at on its own
 * schedule (conditional requests: an unchanged one costs GitHub no rate limit): at the short
 * interval right after it changed, then less often while nothing changes ({@link nextInterval}),
 * and the run is told when what the host says of it changed. The base branch is looked at too:
 * its move is a change for every pull request (each is rebased onto it). A webhook delivery wakes
 * the pull requests it names at once ({@link PrPoller.wake}); a task whose last step failed on
 * the host is told again when its retry is due. Failed looks back off and honour `Retry-After`
 * and exhausted rate-limit windows (the pollers' policy, lib/http/backoff.ts). The host
 * blinking never ends a task: the next look simply tries again.
 */
import { HttpApiError } from "../http/api_error.ts";
import { nextPollDelay } from "../http/backoff.ts";
import type { RateLimit } from "../http/rate_limit.ts";

/** What the poller needs. */
export interface PrPollerOptions {
  /** Between looks at a pull request that just changed. */
  intervalMs: number;
  /** The longest time between two looks at a pull request that does not change. */
  maxIntervalMs: number;
  /** A digest of what the host says of pull request `number` now (`head`: the pushed head). */
  look: (number: number, head: string) => Promise<string>;
  /** The base branch's tip on the host; its move is a change for every pull request. */
  lookBase?: () => Promise<string>;
  /** Told when a watched pull request changed, or a retry is due. */
  onChange: (taskId: string) => void;
  /** The last rate-limit facts of the host (for the back-off). */
  rate: () => RateLimit;
  warn: (line: string) => void;
  now?: () => number;
}

/** What a webhook delivery names; a pull request matching any of it is looked at now. */
export interface WakeHint {
  numbers?: number[];
  /** Head commits (a check suite's or a commit status's SHA). */
  shas?: string[];
  /** Head branches. */
  branches?: string[];
}

/** What the run watches of one pull request. */
export interface WatchedPr {
  number: number;
  /** What the run just saw of it (a digest from the same function as `look`). */
  digest: string;
  /** The head the service pushed. */
  head: string;
  /** Its head branch. */
  branch: string;
}

interface Watched extends Partial<WatchedPr> {
  /** Tell the run at this time (a step that failed on the host). */
  retryAt?: number;
  /** The current interval between looks (grows while nothing changes). */
  interval: number;
  /** When it is looked at next. */
  dueAt: number;
  /** A webhook named it: look at once. */
  woken?: boolean;
}

/** The interval grows by this factor after each look that saw no change. */
const BACKOFF = 1.5;

/** Failed looks back off to at most this (unless the host names a later time). */
const MAX_BACKOFF_MS = 60_000;

/**
 * Deliveries are remembered this long: a pull request the run starts watching after one named it
 * (its first step was still reading the host when the delivery came) is looked at at once.
 */
const WAKE_MEMORY_MS = 60_000;

/** Deliveries remembered, at most. */
const WAKE_MEMORY_SIZE = 200;

/** Deliveries arriving this close together are acted on in one round. */
const WAKE_COALESCE_MS = 25;

/** The next interval between looks: back to `intervalMs` after a change, else grown to the cap. */
export function nextInterval(
  current: number,
  changed: boolean,
  limits: { intervalMs: number; maxIntervalMs: number },
): number {
  if (changed) return limits.intervalMs;
  return Math.min(limits.maxIntervalMs, Math.max(limits.intervalMs, current * BACKOFF));
}

/** Whether a webhook's `hint` names the pull request `w` (an empty hint names every one). */
export function hintNames(hint: WakeHint, w: Partial<WatchedPr>): boolean {
  const named = (hint.numbers?.length ?? 0) + (hint.shas?.length ?? 0) +
    (hint.branches?.length ?? 0);
  if (named === 0) return true;
  return (w.number !== undefined && (hint.numbers ?? []).includes(w.number)) ||
    (!!w.head && (hint.shas ?? []).includes(w.head)) ||
    (!!w.branch && (hint.branches ?? []).includes(w.branch));
}

/** Watches the run's open pull requests. */
export class PrPoller {
  readonly #o: PrPollerOptions;
  readonly #watched = new Map<string, Watched>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #round: Promise<void> | undefined;
  #failures = 0;
  /** No look before this time (the host failed or limits us). */
  #blockedUntil = 0;
  #stopped = true;
  #again = false;
  /** When the scheduled round runs. */
  #dueAt: number | undefined;
  #base: { tip?: string; interval: number; dueAt: number };
  /** Recent deliveries that named pull requests (see {@link WAKE_MEMORY_MS}). */
  #recent: { hint: WakeHint; at: number }[] = [];

  constructor(options: PrPollerOptions) {
    this.#o = options;
    this.#base = { interval: options.intervalMs, dueAt: 0 };
  }

  #now(): number {
    return (this.#o.now ?? Date.now)();
  }

  /** Start the rounds. */
  start(): void {
    this.#stopped = false;
    this.#plan();
  }

  /** Stop; resolves when a round under way has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#round;
  }

  /** Watch `taskId`'s pull request as the run just saw it. */
  watch(taskId: string, pr: WatchedPr): void {
    const w = this.#watched.get(taskId);
    const changed = !w || w.number !== pr.number || w.digest !== pr.digest || w.head !== pr.head;
    const interval = changed ? this.#o.intervalMs : w.interval;
    // A delivery that came while its step read the host found nothing watched to wake: its
    // first step, or a step that pushed a new head (a rebase) a commit status then named.
    const missed = (!w || w.number !== pr.number || w.head !== pr.head) &&
      this.#recent.some((r) => r.at >= this.#now() - WAKE_MEMORY_MS && hintNames(r.hint, pr));
    this.#watched.set(taskId, {
      ...w,
      ...pr,
      interval,
      dueAt: changed || !w ? this.#now() + interval : w.dueAt,
      woken: w?.woken || missed,
    });
    if (missed && !this.#round) this.#schedule(WAKE_COALESCE_MS);
    else this.#plan();
  }

  /** Tell the run about `taskId` again in `delayMs` (its step failed on the host). */
  retry(taskId: string, delayMs: number): void {
    const w = this.#watched.get(taskId) ??
      { interval: this.#o.intervalMs, dueAt: this.#now() + this.#o.intervalMs };
    this.#watched.set(taskId, { ...w, retryAt: this.#now() + delayMs });
    this.#plan();
  }

  /** Stop watching `taskId` (merged, closed, or its landing ended). */
  forget(taskId: string): void {
    this.#watched.delete(taskId);
  }

  /** Tasks watched now. */
  watching(): string[] {
    return [...this.#watched.keys()];
  }

  /**
   * Look now at the pull requests `hint` names (a webhook said something changed on the host);
   * without a hint, at every one.
   */
  wake(hint: WakeHint = {}): void {
    if (this.#stopped) return;
    const now = this.#now();
    if ((hint.numbers?.length ?? 0) + (hint.shas?.length ?? 0) + (hint.branches?.length ?? 0)) {
      this.#recent = [
        ...this.#recent.filter((r) => r.at >= now - WAKE_MEMORY_MS).slice(1 - WAKE_MEMORY_SIZE),
        { hint, at: now },
      ];
    }
    let any = false;
    for (const [taskId, w] of this.#watched) {
      if (w.number === undefined || !hintNames(hint, w)) continue;
      this.#watched.set(taskId, { ...w, woken: true });
      any = true;
    }
    if (!any) return;
    if (this.#round) {
      this.#again = true; // the round under way may have read before the change
      return;
    }
    this.#schedule(WAKE_COALESCE_MS);
  }

  /**
   * The run saw the base branch's tip at `tip` (it fetched it, or merged into it). When that is a
   * move, every watched task but `except` (whose own step saw it) is told now.
   */
  seenBase(tip: string, except?: string): void {
    const moved = this.#base.tip !== undefined && this.#base.tip !== tip;
    this.#base = { tip, interval: this.#o.intervalMs, dueAt: this.#now() + this.#o.intervalMs };
    if (!moved) return;
    for (const [taskId, w] of [...this.#watched]) {
      if (taskId === except || w.number === undefined) continue;
      this.#watched.set(taskId, { ...w, interval: this.#o.intervalMs });
      this.#o.onChange(taskId);
    }
    this.#plan();
  }

  /** Look at the base branch's tip now (a webhook said a pull request was merged into it). */
  lookAtBase(): void {
    if (this.#stopped || !this.#o.lookBase) return;
    this.#base = { ...this.#base, dueAt: this.#now() };
    if (this.#round) {
      this.#again = true;
      return;
    }
    this.#schedule(Math.max(WAKE_COALESCE_MS, this.#blockedUntil - this.#now()));
  }

  /**
   * A delay for the retry of a step that failed with `error`: doubled per failure up to a minute
   * (a host that is back is seen soon), never before its `Retry-After` or rate-limit reset.
   */
  retryDelay(error: unknown, failures: number): number {
    const rate = error instanceof HttpApiError ? error.rate : this.#o.rate();
    const input = { intervalMs: this.#o.intervalMs, nowMs: this.#now() };
    const backoff = nextPollDelay({ ...input, failures: Math.max(1, failures), rate: {} });
    const host = nextPollDelay({ ...input, failures: 0, rate });
    return Math.max(Math.min(MAX_BACKOFF_MS, backoff), host);
  }

  /** Schedule the next round at the earliest time something is due. */
  #plan(): void {
    if (this.#stopped || this.#round) return;
    const now = this.#now();
    const times: number[] = [];
    let pulls = false;
    for (const w of this.#watched.values()) {
      if (w.retryAt !== undefined) times.push(w.retryAt);
      if (w.number === undefined) continue;
      pulls = true;
      times.push(Math.max(w.woken ? now : w.dueAt, this.#blockedUntil));
    }
    if (pulls && this.#o.lookBase) times.push(Math.max(this.#base.dueAt, this.#blockedUntil));
    if (times.length === 0) return;
    this.#schedule(Math.max(0, Math.min(...times) - now));
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
        } else this.#plan();
      });
    }, Math.max(0, delayMs));
  }

  async #runRound(): Promise<void> {
    const now = this.#now();
    const blocked = now < this.#blockedUntil;
    const due: [string, Watched][] = [];
    for (const [taskId, w] of [...this.#watched]) {
      if (w.retryAt !== undefined && w.retryAt <= now) {
        this.#watched.set(taskId, { ...w, retryAt: undefined });
        this.#o.onChange(taskId);
        continue;
      }
      if (w.number !== undefined && !blocked && (w.woken || w.dueAt <= now)) {
        due.push([taskId, w]);
      }
    }
    // A round held back by the back-off (it only retries a step) asks the host nothing: it
    // neither resets the back-off nor counts a failure.
    if (blocked) return;
    try {
      if (this.#o.lookBase) await this.#lookBase(now);
      // Each pull request's look is its own requests: they go out side by side.
      await Promise.all(due.map(([taskId, w]) => this.#lookAt(taskId, w)));
      this.#failures = 0;
      this.#blockedUntil = 0;
    } catch (e) {
      this.#failures++;
      const delay = this.retryDelay(e, this.#failures);
      this.#blockedUntil = this.#now() + delay;
      this.#o.warn(
        `looking at open pull requests failed (${(e as Error).message}); next look within ${
          Math.round(delay / 1000)
        } s`,
      );
    }
  }

  async #lookBase(now: number): Promise<void> {
    if (this.#base.dueAt > now) return;
    if (![...this.#watched.values()].some((w) => w.number !== undefined)) return;
    const tip = await this.#o.lookBase!();
    if (this.#base.tip !== undefined && this.#base.tip !== tip) return this.seenBase(tip);
    const interval = nextInterval(this.#base.interval, false, this.#o);
    this.#base = { tip, interval, dueAt: this.#now() + interval };
  }

  async #lookAt(taskId: string, w: Watched): Promise<void> {
    const at = this.#watched.get(taskId);
    if (at) this.#watched.set(taskId, { ...at, woken: false });
    let digest: string;
    try {
      digest = await this.#o.look(w.number!, w.head ?? "");
    } catch (e) {
      const now = this.#watched.get(taskId);
      if (now && w.woken) this.#watched.set(taskId, { ...now, woken: true }); // look again
      throw e;
    }
    const now = this.#watched.get(taskId);
    if (!now || now.number !== w.number) return; // forgotten or replaced meanwhile
    const changed = now.digest !== digest;
    const interval = nextInterval(now.interval, changed, this.#o);
    this.#watched.set(taskId, { ...now, digest, interval, dueAt: this.#now() + interval });
    if (changed) this.#o.onChange(taskId);
  }
}
