/**
 * How much of a provider's answer the lane reads and keeps. A request may use 32 000 output
 * tokens — a few hundred kilobytes of text — so an answer far longer than that did not come from
 * the model the request asked for, and no results file needs more than a few megabytes a
 * request: whatever an endpoint sends beyond these is never held in memory or written to disk.
 */

/** Output tokens a request may use: room for a whole patch. */
export const BATCH_MAX_TOKENS = 32_000;

/** The longest answer the lane applies (characters); a longer one is `not_applied`. */
export const ANSWER_MAX_CHARS = 1_000_000;

/** The part of an over-long answer kept in the session log (characters). */
export const ANSWER_LOG_CHARS = 64_000;

/** Bytes of a results file read per request asked for (an answer JSON-escaped, with room). */
const RESULT_BYTES_PER_REQUEST = 8 * 1024 * 1024;

/** The most bytes of a results (or output and error) file read for `requests` requests. */
export function resultsMaxBytes(requests: number): number {
  return Math.max(1, requests) * RESULT_BYTES_PER_REQUEST;
}
