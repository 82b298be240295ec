/**
 * The HTTP the batch clients share: a client of the endpoint (lib/http/client.ts) with its
 * headers, a generous time limit and retries of the reads a busy provider refuses for now, and
 * the lines of a JSONL results file. Failures are the client's `HttpApiError`, naming the
 * provider, the call and what it answered. A submission is sent again only after a refusal that
 * created nothing ({@link refusedUndone}).
 */
import type { HttpApiError } from "../http/api_error.ts";
import { createHttpClient, type HttpClient } from "../http/client.ts";
import type { BatchEndpoint } from "./provider.ts";

/** How long one call may take (an upload or a results file can be large). */
export const CALL_TIMEOUT_MS = 60_000;

/** The client of `endpoint`: its headers on every call; status and result reads retried twice. */
export function batchClient(endpoint: BatchEndpoint): HttpClient {
  return createHttpClient({
    service: `the ${endpoint.provider} batch API`,
    headers: endpoint.headers,
    timeoutMs: CALL_TIMEOUT_MS,
    retries: 2,
  });
}

/**
 * Whether a provider's refusal of a submission left nothing created, so that sending it again
 * cannot make a second batch: Anthropic's 529 `overloaded_error` (the API turned the request
 * down), and a 429 or 503 that names its wait (`Retry-After`: a rate limit, not a spend limit
 * or an exhausted quota, which name none and are not asked again).
 */
export function refusedUndone(refusal: HttpApiError): boolean {
  if (refusal.status === 529) return true;
  return (refusal.status === 429 || refusal.status === 503) && refusal.retryAfterMs !== undefined;
}

/** Why a request has no result in a results file read only up to `maxBytes`. */
export function cutResults(maxBytes: number): string {
  return `the results file is longer than the ${maxBytes / 1024 / 1024} MiB read for ` +
    "the batch's requests; its rest was not read";
}

/** The JSON object lines of a results file. */
export function jsonLines(text: string): Record<string, unknown>[] {
  return text.split("\n").filter((l) => l.trim() !== "").flatMap((l) => {
    try {
      const v = JSON.parse(l);
      return v && typeof v === "object" && !Array.isArray(v) ? [v] : [];
    } catch {
      return [];
    }
  });
}
