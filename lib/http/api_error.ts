/**
 * The one error of outbound HTTP calls ({@link HttpApiError}, thrown by lib/http/client.ts and by
 * callers that find an error inside a 200, such as GraphQL's), and how an API's error body is
 * read ({@link apiWordsOf}): every service this program calls words its errors differently
 * (`{"error":{"code","message"}}` of the task API, OpenAI and Anthropic; GitHub's `message` with
 * `errors[].message`; GitLab's `message` or `error`; Jira's `errorMessages`; GraphQL's `errors`).
 *
 * A message is safe to print: what the API wrote is escaped (lib/util/printable.ts), the URL
 * carries no query, fragment or credentials, and the values of the request's credential headers
 * are masked wherever an API echoes them.
 */
import { printable } from "../util/printable.ts";
import type { RateLimit } from "./rate_limit.ts";

/** What {@link HttpApiError} is made of; all but `status` may be left out. */
export interface HttpApiErrorInit {
  /** HTTP status; 0 when no answer came (network failure, time limit). */
  status: number;
  /**
   * Machine-readable kind: the API's own error code when its body names one, else `http_<status>`,
   * `timeout`, `network_error` or `invalid_json`.
   */
  code?: string;
  method?: string;
  /** The URL asked; stored without its query, fragment and credentials. */
  url?: string;
  /** The API's own words (its error body's message). */
  apiMessage?: string;
  /** The first bytes of the answer's body. */
  body?: string;
  /** The rate-limit facts of the answer. */
  rate?: RateLimit;
  /** How long the API asked the caller to wait (`Retry-After`, or until its window resets). */
  retryAfterMs?: number;
  /** What the caller can do about it, from the answer (GitHub names the permission a token lacks). */
  hint?: string;
  cause?: unknown;
}

/** An outbound HTTP call failed: refused, unanswered, or answered with what could not be read. */
export class HttpApiError extends Error {
  /** HTTP status; 0 when no answer came. */
  readonly status: number;
  /** See {@link HttpApiErrorInit.code}. */
  readonly code: string;
  readonly method: string;
  /** The URL asked, without query, fragment or credentials. */
  readonly url: string;
  /** The API's own words, escaped ("" when it said nothing readable). */
  readonly apiMessage: string;
  /** The first bytes of the answer's body, escaped. */
  readonly body: string;
  readonly rate: RateLimit;
  /** How long the API asked the caller to wait, in ms. */
  readonly retryAfterMs?: number;
  /** What the caller can do about it, escaped ("" when nothing is known). */
  readonly hint: string;

  /** `message` is escaped here; it must not hold a secret (the client masks the ones it sent). */
  constructor(message: string, init: HttpApiErrorInit) {
    super(printable(message), init.cause === undefined ? undefined : { cause: init.cause });
    this.name = "HttpApiError";
    this.status = init.status;
    this.code = init.code ?? (init.status === 0 ? "network_error" : `http_${init.status}`);
    this.method = init.method ?? "GET";
    this.url = init.url === undefined ? "" : safeUrl(init.url);
    this.apiMessage = printable(init.apiMessage ?? "");
    this.body = printable(init.body ?? "");
    this.rate = init.rate ?? {};
    if (init.retryAfterMs !== undefined) this.retryAfterMs = init.retryAfterMs;
    this.hint = printable(init.hint ?? "");
  }

  /**
   * True when the same call may work later unchanged: no answer, a time limit (408), a rate limit
   * (429, or 403 with none remaining), a server error (5xx). Other 4xx need a fix.
   */
  get retryable(): boolean {
    const s = this.status;
    return s === 0 || s === 408 || s === 429 || s >= 500 ||
      (s === 403 && this.rate.remaining === 0);
  }
}

/** `url` fit for a message: no query, fragment, user or password (tokens never show). */
export function safeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return url.replace(/[?#].*$/s, "").replace(/\/\/[^/@]*@/, "//");
  }
}

/** The longest API message kept (the rest of the body is in `body`). */
const MAX_API_MESSAGE = 300;

/** What an error body says: the API's message and, when it names one, its error code. */
export interface ApiWords {
  message: string;
  code?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** The `message` strings of a list of error objects (GitHub's details, GraphQL's errors). */
function messagesOf(list: unknown): string[] {
  return Array.isArray(list)
    ? list.map((e) => typeof e === "string" ? e : text((e as { message?: unknown })?.message))
      .filter((m): m is string => m !== undefined)
    : [];
}

/** The API's words in an error body; for a body that is not JSON, its first line(s). */
export function apiWordsOf(body: string): ApiWords {
  let json: Record<string, unknown> | undefined;
  try {
    const v = JSON.parse(body);
    if (v && typeof v === "object" && !Array.isArray(v)) json = v;
  } catch { /* not JSON */ }
  if (!json) return { message: body.slice(0, 200).trim() };
  const cut = (m: string) => m.slice(0, MAX_API_MESSAGE);
  const error = json.error;
  if (error && typeof error === "object" && !Array.isArray(error)) {
    // {"error":{"code","message"}} (task API, OpenAI), {"error":{"type","message"}} (Anthropic),
    // {"error":{"error":{…}}} (a batch result's nested error).
    const e = error as Record<string, unknown>;
    const inner = e.error && typeof e.error === "object" ? e.error as Record<string, unknown> : e;
    const message = text(inner.message) ?? text(e.message) ?? "";
    const code = text(e.code) ?? text(inner.code);
    return code ? { message: cut(message), code } : { message: cut(message) };
  }
  // GitHub {"message", "errors":[{message}]}; GitLab {"message"} (a string or a field map) or
  // {"error", "error_description"}.
  const m = json.message ?? json.error_description ?? json.error;
  if (typeof m === "string") {
    const details = messagesOf(json.errors);
    return { message: cut(details.length > 0 ? `${m}: ${details.join("; ")}` : m) };
  }
  if (m && typeof m === "object") return { message: cut(JSON.stringify(m)) };
  // Jira {"errorMessages":[…], "errors":{field: message}}; GraphQL {"errors":[{message}]}.
  const listed = [
    ...messagesOf(json.errorMessages),
    ...messagesOf(json.errors),
    ...(json.errors && typeof json.errors === "object" && !Array.isArray(json.errors)
      ? Object.entries(json.errors).map(([k, v]) => `${k}: ${String(v)}`)
      : []),
  ];
  if (listed.length > 0) return { message: cut(listed.join("; ")) };
  return { message: body.slice(0, 200).trim() };
}

/** Header names whose values are credentials. */
const CREDENTIAL_HEADER = /authorization|token|api-?key|secret|cookie|password|session/i;

/**
 * The credential values among `headers` (each whole, and the part after an auth scheme such as
 * `Bearer`), to be masked in anything an API answers.
 */
export function credentialsOf(headers: Headers): string[] {
  const out: string[] = [];
  for (const [name, value] of headers) {
    if (!CREDENTIAL_HEADER.test(name) || value.length < 4) continue;
    out.push(value);
    const scheme = /^\s*\S+\s+(\S{4,})\s*$/.exec(value);
    if (scheme) out.push(scheme[1]);
  }
  return out.sort((a, b) => b.length - a.length);
}

/** `text` with every one of `secrets` replaced by `[redacted]`. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (out.includes(s)) out = out.split(s).join("[redacted]");
  return out;
}
