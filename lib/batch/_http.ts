/**
 * The HTTP the batch clients share: calls with the endpoint's headers and a time limit, a
 * {@link BatchApiError} naming the provider, the call and what it answered for every failure,
 * and the lines of a JSONL results file.
 */
import type { BatchEndpoint } from "./provider.ts";

/** A call to a batch API failed. */
export class BatchApiError extends Error {
  /** HTTP status, or 0 when no answer came. */
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.name = "BatchApiError";
    this.status = status;
  }
}

/** How long one call may take. */
export const CALL_TIMEOUT_MS = 60_000;

/** The provider's own error message in an error body (`{"error":{"message"}}` or nested). */
function errorMessage(text: string): string {
  try {
    const body = JSON.parse(text);
    const e = body?.error?.error ?? body?.error;
    if (typeof e?.message === "string") return e.message;
  } catch { /* not JSON */ }
  return text.slice(0, 300).trim();
}

/** `fetch` with the endpoint's headers and a timeout; a non-2xx answer is a BatchApiError. */
export async function call(
  endpoint: BatchEndpoint,
  what: string,
  url: string,
  init: { method?: string; json?: unknown; body?: BodyInit } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...endpoint.headers };
  if (init.json !== undefined) headers["content-type"] = "application/json";
  let res: Response;
  try {
    res = await fetch(url, {
      method: init.method ?? "GET",
      headers,
      body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
  } catch (e) {
    throw new BatchApiError(`${endpoint.provider} ${what}: ${(e as Error).message}`, 0);
  }
  if (!res.ok) {
    throw new BatchApiError(
      `${endpoint.provider} ${what}: HTTP ${res.status}: ${errorMessage(await res.text())}`,
      res.status,
    );
  }
  return res;
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
