/**
 * Calling tracker APIs politely: one request helper with a timeout that reads every tracker's
 * rate-limit headers, one error type carrying the status and how long to wait, and the pure
 * back-off policy of the pollers.
 */

/** What a response said about the caller's rate limit. */
export interface RateLimit {
  /** Requests left in the window (`X-RateLimit-Remaining`, `RateLimit-Remaining`, Linear's). */
  remaining?: number;
  /** When the window resets (epoch ms). */
  resetAtMs?: number;
  /** `Retry-After`, in ms. */
  retryAfterMs?: number;
}

/** A tracker API call that failed. */
export class TrackerApiError extends Error {
  readonly code = "tracker_api";
  constructor(
    message: string,
    /** HTTP status (0 for a network failure or timeout). */
    readonly status: number,
    readonly rate: RateLimit = {},
  ) {
    super(message);
    this.name = "TrackerApiError";
  }

  /** 429, 5xx and network failures are worth retrying later; 4xx need a fix. */
  get retryable(): boolean {
    return this.status === 0 || this.status === 429 || this.status >= 500;
  }
}

/** Parse a reset header: epoch ms, epoch s, seconds from now, or a date. */
function resetAt(value: string | null, nowMs: number): number | undefined {
  if (!value) return undefined;
  const n = Number(value);
  if (Number.isFinite(n)) {
    if (n > 1e12) return n;
    if (n > 1e9) return n * 1000;
    return nowMs + n * 1000;
  }
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/** The rate-limit facts of a response (GitHub, GitLab, Jira, Linear and Plane spellings). */
export function rateLimitOf(headers: Headers, nowMs: number): RateLimit {
  const rate: RateLimit = {};
  const remaining = headers.get("x-ratelimit-remaining") ?? headers.get("ratelimit-remaining") ??
    headers.get("x-ratelimit-requests-remaining");
  if (remaining !== null && Number.isFinite(Number(remaining))) rate.remaining = Number(remaining);
  const reset = resetAt(
    headers.get("x-ratelimit-reset") ?? headers.get("ratelimit-reset") ??
      headers.get("x-ratelimit-requests-reset"),
    nowMs,
  );
  if (reset !== undefined) rate.resetAtMs = reset;
  const retry = headers.get("retry-after");
  if (retry !== null) {
    const at = resetAt(retry, nowMs);
    if (at !== undefined) rate.retryAfterMs = Math.max(0, at - nowMs);
  }
  return rate;
}

/** Everything a tracker client needs to make calls. */
export interface HttpDeps {
  fetch: typeof fetch;
  now: () => number;
  /** Per-request timeout (default 20 s). */
  timeoutMs?: number;
}

/** A JSON answer and its rate-limit facts. */
export interface JsonAnswer {
  json: unknown;
  headers: Headers;
  rate: RateLimit;
}

/** Make a request and parse its JSON answer; non-2xx and network failures throw {@link TrackerApiError}. */
export async function requestJson(
  deps: HttpDeps,
  url: string,
  init: RequestInit = {},
): Promise<JsonAnswer> {
  let res: Response;
  try {
    res = await deps.fetch(url, { ...init, signal: AbortSignal.timeout(deps.timeoutMs ?? 20_000) });
  } catch (e) {
    throw new TrackerApiError(`${init.method ?? "GET"} ${redact(url)}: ${(e as Error).message}`, 0);
  }
  const rate = rateLimitOf(res.headers, deps.now());
  const text = await res.text();
  if (!res.ok) {
    throw new TrackerApiError(
      `${init.method ?? "GET"} ${redact(url)}: HTTP ${res.status} ${text.slice(0, 200).trim()}`,
      res.status,
      rate,
    );
  }
  let json: unknown = null;
  if (text !== "") {
    try {
      json = JSON.parse(text);
    } catch {
      throw new TrackerApiError(`${redact(url)}: answer is not JSON`, res.status, rate);
    }
  }
  return { json, headers: res.headers, rate };
}

/** A URL without its query (tokens never travel in queries here, but keep logs short). */
export function redact(url: string): string {
  return url.replace(/\?.*$/, "");
}

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
 * once the tracker says no requests remain.
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
