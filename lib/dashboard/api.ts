/**
 * The board page's calls to the JSON API (browser-safe): bearer token when one is set, JSON
 * error bodies turned into {@link ApiError}s with plain words.
 */
import { type ApiFailure, plainWords } from "./error_words.ts";

/** A failed API call: status (0 for a network failure), error code and message. */
export class ApiError extends Error implements ApiFailure {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
    this.name = "ApiError";
  }

  /** The explanation shown to the operator. */
  get words(): string {
    return plainWords(this);
  }
}

/** Options of {@link apiFetch}. */
export interface ApiFetchOptions {
  token?: string;
  method?: "GET" | "POST";
  body?: unknown;
  headers?: Record<string, string>;
}

/** Fetch `path` as JSON; throws {@link ApiError} on a non-2xx answer or a network failure. */
export async function apiFetch<T>(path: string, options: ApiFetchOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: "application/json", ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  let response: Response;
  try {
    response = await fetch(path, {
      method: options.method ?? "GET",
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      cache: "no-store",
    });
  } catch (e) {
    throw new ApiError(0, "network_error", (e as Error).message);
  }
  const text = await response.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (!response.ok) {
    const error = (json as { error?: { code?: string; message?: string } } | null)?.error;
    throw new ApiError(
      response.status,
      error?.code ?? "http_error",
      error?.message ?? (text.slice(0, 200) || response.statusText),
    );
  }
  return json as T;
}
