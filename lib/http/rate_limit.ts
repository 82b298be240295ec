/**
 * What an API's answer says about the caller's rate limit, in every spelling the services this
 * program calls use (GitHub's `X-RateLimit-*`, GitLab's and the IETF draft's `RateLimit-*`,
 * Linear's `X-RateLimit-Requests-*`, `Retry-After` as seconds or a date). Pure.
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

/**
 * How long the API asked the caller to wait, in ms: its `Retry-After`, else the time until the
 * window resets when it says none remain; undefined when it asked for nothing.
 */
export function waitAskedFor(rate: RateLimit, nowMs: number): number | undefined {
  if (rate.retryAfterMs !== undefined) return rate.retryAfterMs;
  if (rate.remaining === 0 && rate.resetAtMs !== undefined) {
    return Math.max(0, rate.resetAtMs - nowMs);
  }
  return undefined;
}
