/**
 * When to ask an API again: the pollers' schedule after successes and failures
 * ({@link nextPollDelay}: trackers, pull requests) and the client's wait before retrying a
 * refused idempotent request ({@link retryWait}). Both honour what the API asked for
 * (`Retry-After`, an exhausted rate-limit window). Pure: the time is an argument.
 */
import { type RateLimit, waitAskedFor } from "./rate_limit.ts";

/** Inputs of {@link nextPollDelay}. */
export interface PollDelayInput {
  intervalMs: number;
  nowMs: number;
  /** Consecutive failed polls, this one included (0 after a success). */
  failures: number;
  rate?: RateLimit;
}

/** Longest wait between polls after repeated failures. */
const MAX_BACKOFF_MS = 30 * 60_000;

/**
 * When to poll next: the interval after a success; after failures the interval doubled per
 * failure (capped at 30 min); never before `Retry-After`, and never before the window resets
 * once the API says no requests remain.
 */
export function nextPollDelay(input: PollDelayInput): number {
  const { intervalMs, nowMs, failures, rate } = input;
  let delay = failures === 0
    ? intervalMs
    : Math.min(MAX_BACKOFF_MS, Math.max(intervalMs, 1000) * 2 ** Math.min(failures, 20));
  if (rate?.retryAfterMs !== undefined) delay = Math.max(delay, rate.retryAfterMs);
  if (rate?.remaining === 0 && rate.resetAtMs !== undefined) {
    delay = Math.max(delay, rate.resetAtMs - nowMs + 1000);
  }
  return Math.max(delay, 0);
}

/** First wait of {@link retryWait} when the API asked for none; doubled per retry. */
const FIRST_RETRY_MS = 500;

/** Longest wait of {@link retryWait} when the API asked for none. */
const MAX_RETRY_MS = 8_000;

/** Inputs of {@link retryWait}. */
export interface RetryWaitInput {
  /** Retries made so far (0 before the first). */
  retries: number;
  rate: RateLimit;
  nowMs: number;
}

/**
 * How long to wait before retrying a request the API refused for now: what it asked for
 * (`Retry-After`, or until its exhausted window resets), else 0.5 s doubled per retry up to 8 s.
 */
export function retryWait(input: RetryWaitInput): number {
  return waitAskedFor(input.rate, input.nowMs) ??
    Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** input.retries);
}
