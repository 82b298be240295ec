/**
 * The one client for the program's outbound HTTP: code hosts (lib/landing), trackers, the
 * providers' batch APIs, the MCP catalog and the task API. {@link createHttpClient} validates
 * its options once and returns a client whose every request has
 *
 * - a time limit (connect and body) composed with the caller's `AbortSignal`: the caller's abort
 *   propagates as it is, the time limit becomes an {@link HttpApiError} `timeout`;
 * - headers asked at each request (a rotated token is used at once) and a JSON body helper;
 * - with `cacheEntries`, conditional GETs: the `ETag`/`Last-Modified` of the last answer per URL
 *   goes out, and a 304 answers the remembered body;
 * - the rate-limit facts of every answer (lib/http/rate_limit.ts);
 * - with `retries`, a retry of idempotent requests the API refused for now (408, 429, 500, 502,
 *   503, 504, 529, 403 with no requests remaining), after the `Retry-After` or window reset it
 *   asked for, else a doubling back-off — never longer than `maxRetryWaitMs`, beyond which the
 *   error goes to the caller, whose own schedule honours its `retryAfterMs`. Unanswered requests
 *   are not retried: the caller knows whether waiting makes sense. A request that is not
 *   idempotent is sent again only when the caller's `resendWhen` says the refusal means the API
 *   did not act on it (Anthropic's 529 overloaded: nothing was created);
 * - one error type, {@link HttpApiError}, whose message names the service, method and URL and
 *   what the API said, escaped, with no query string and no credential in it.
 */
import {
  apiWordsOf,
  credentialsOf,
  HttpApiError,
  type HttpApiErrorInit,
  maskSecrets,
  safeUrl,
} from "./api_error.ts";
import { retryWait } from "./backoff.ts";
import { ConditionalCache } from "./conditional_cache.ts";
import { type RateLimit, rateLimitOf, waitAskedFor } from "./rate_limit.ts";
import { type Asked, BODY_EXCERPT, HttpAnswer } from "./http_answer.ts";
import { abortableSleep, readBody } from "./_read.ts";

/** Options of {@link createHttpClient}. */
export interface HttpClientOptions {
  /** Who is called, as messages name it: `GitHub`, `the anthropic batch API`, `the task server`. */
  service: string;
  /** What a relative path is appended to (an absolute `http(s)://` URL is used as it is). */
  baseUrl?: string;
  /** Headers of every request; a function is asked at each request. */
  headers?: HeadersInit | (() => HeadersInit);
  /** Time limit of one request, connect and body (default 20 000 ms). */
  timeoutMs?: number;
  /** Answers remembered for conditional GETs (default 0: none, no GET is conditional). */
  cacheEntries?: number;
  /**
   * The remembered answers to use instead (wins over `cacheEntries`): a caller that makes a
   * client per call (a tracker's poll) keeps them between its calls.
   */
  cache?: ConditionalCache;
  /** Retries of a refused idempotent request (default 0). */
  retries?: number;
  /** The longest wait before a retry (default 30 000 ms); a longer one goes to the caller. */
  maxRetryWaitMs?: number;
  /** Words added to a refusal, read from its answer (GitHub: the permission the token lacks). */
  hint?: (response: Response) => string | undefined;
  /** Tests inject these. */
  fetch?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** Options of one request. */
export interface HttpRequestOptions {
  /** Default `GET`. */
  method?: string;
  /** Added to (and overriding) the client's headers. */
  headers?: HeadersInit;
  /** A JSON body (sets `content-type: application/json`). */
  json?: unknown;
  /** Any other body (a form, bytes). */
  body?: BodyInit;
  signal?: AbortSignal;
  /** This request's time limit (default: the client's). */
  timeoutMs?: number;
  /** `manual`: a 3xx is an answer, not followed (the caller checks where it leads). */
  redirect?: RequestRedirect;
  /** Read at most this many bytes of the body; a longer one is cut there (`truncated`). */
  maxBytes?: number;
  /**
   * A request that is not idempotent (a POST that creates something) is retried like a read
   * only when this says the refusal left nothing done; without it, never.
   */
  resendWhen?: (refusal: HttpApiError) => boolean;
}

/** Methods that may be sent twice with the effect of once (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"]);

/** Statuses that mean "not now" rather than "not this" (529: Anthropic's "overloaded"). */
const TRY_LATER = new Set([408, 429, 500, 502, 503, 504, 529]);

/** Bytes of an error body read for its message and excerpt. */
const ERROR_BODY_BYTES = 64 * 1024;

const decoder = new TextDecoder();

/** Calls one service as one identity; see the module comment. */
export interface HttpClient {
  /** Send a request; resolves with a 2xx answer (and 304/3xx when asked for), throws otherwise. */
  request(url: string, options?: HttpRequestOptions): Promise<HttpAnswer>;
  /** The absolute URL of `path`. */
  url(path: string): string;
}

function positive(name: string, value: number | undefined, min: number): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= min)) {
    throw new RangeError(`createHttpClient(): ${name} must be an integer of at least ${min}`);
  }
}

/** A client of `options.service` (see the module comment); bad options throw here. */
export function createHttpClient(options: HttpClientOptions): HttpClient {
  if (!options.service.trim()) {
    throw new TypeError("createHttpClient(): service must name who is called, for messages");
  }
  if (options.baseUrl !== undefined && !URL.canParse(options.baseUrl)) {
    throw new TypeError(`createHttpClient(): baseUrl ${options.baseUrl} is not a URL`);
  }
  positive("timeoutMs", options.timeoutMs, 1);
  positive("cacheEntries", options.cacheEntries, 0);
  positive("retries", options.retries, 0);
  positive("maxRetryWaitMs", options.maxRetryWaitMs, 0);
  return new Client(options);
}

class Client implements HttpClient {
  readonly #o: HttpClientOptions;
  readonly #base: string;
  readonly #cache?: ConditionalCache;
  readonly #fetch: typeof fetch;
  readonly #now: () => number;

  constructor(options: HttpClientOptions) {
    this.#o = options;
    this.#base = (options.baseUrl ?? "").replace(/\/+$/, "");
    if (options.cache) this.#cache = options.cache;
    else if (options.cacheEntries) this.#cache = new ConditionalCache(options.cacheEntries);
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#now = options.now ?? Date.now;
  }

  url(path: string): string {
    return /^https?:\/\//i.test(path) ? path : `${this.#base}${path}`;
  }

  async request(path: string, options: HttpRequestOptions = {}): Promise<HttpAnswer> {
    const method = (options.method ?? "GET").toUpperCase();
    const idempotent = IDEMPOTENT.has(method);
    const retries = idempotent || options.resendWhen ? this.#o.retries ?? 0 : 0;
    const sleep = this.#o.sleep ?? abortableSleep;
    for (let attempt = 0;; attempt++) {
      try {
        return await this.#once(this.url(path), method, options);
      } catch (e) {
        if (!(e instanceof HttpApiError) || attempt >= retries || !askedToWait(e)) throw e;
        if (!idempotent && !options.resendWhen!(e)) throw e;
        const wait = retryWait({ retries: attempt, rate: e.rate, nowMs: this.#now() });
        if (wait > (this.#o.maxRetryWaitMs ?? 30_000)) throw e;
        await sleep(wait, options.signal);
      }
    }
  }

  async #once(url: string, method: string, options: HttpRequestOptions): Promise<HttpAnswer> {
    const o = this.#o;
    const headers = new Headers(typeof o.headers === "function" ? o.headers() : o.headers);
    for (const [k, v] of new Headers(options.headers)) headers.set(k, v);
    let body = options.body;
    if (options.json !== undefined) {
      headers.set("content-type", "application/json");
      body = JSON.stringify(options.json);
    }
    const cache = method === "GET" && !headers.has("if-none-match") &&
        !headers.has("if-modified-since")
      ? this.#cache
      : undefined;
    for (const [k, v] of Object.entries(cache?.validators(url) ?? {})) headers.set(k, v);
    const conditional = headers.has("if-none-match") || headers.has("if-modified-since");
    const asked: Asked = { service: o.service, method, url, secrets: credentialsOf(headers) };
    const timeoutMs = options.timeoutMs ?? o.timeoutMs ?? 20_000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const where = `${method} ${safeUrl(url)}`;
    let response: Response | undefined;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        body,
        signal,
        ...(options.redirect ? { redirect: options.redirect } : {}),
      });
      const rate = rateLimitOf(response.headers, this.#now());
      const status = response.status;
      if (status === 304 && conditional) {
        await response.body?.cancel();
        const hit = cache?.get(url);
        return new HttpAnswer({
          status: 304,
          headers: hit?.headers ?? response.headers,
          rate,
          body: hit?.body ?? new Uint8Array(),
          truncated: false,
        }, asked);
      }
      const redirected = options.redirect === "manual" && status >= 300 && status < 400;
      if (response.ok || redirected) {
        const { bytes, truncated } = redirected
          ? (await response.body?.cancel(), { bytes: new Uint8Array(), truncated: false })
          : await readBody(response, options.maxBytes);
        if (cache && response.ok && !truncated) cache.remember(url, response.headers, bytes);
        return new HttpAnswer(
          { status, headers: response.headers, rate, body: bytes, truncated },
          asked,
        );
      }
      throw await this.#refusal(response, rate, asked);
    } catch (e) {
      if (e instanceof HttpApiError) throw e;
      if (options.signal?.aborted) throw options.signal.reason;
      const init: HttpApiErrorInit = { status: 0, method, url, cause: e };
      if (timeout.aborted) {
        throw new HttpApiError(
          `${o.service} did not answer within ${seconds(timeoutMs)} (${where})`,
          { ...init, code: "timeout" },
        );
      }
      // fetch's own words repeat the URL, query included: keep its safe form only.
      const why = maskSecrets((e as Error)?.message ?? String(e), asked.secrets)
        .replace(/https?:\/\/[^\s)]+/gi, (u) => safeUrl(u));
      throw new HttpApiError(`cannot reach ${o.service} (${where}): ${why}`, init);
    }
  }

  async #refusal(response: Response, rate: RateLimit, asked: Asked): Promise<HttpApiError> {
    const { bytes } = await readBody(response, ERROR_BODY_BYTES);
    const text = maskSecrets(decoder.decode(bytes), asked.secrets);
    const words = apiWordsOf(text);
    const hint = maskSecrets(this.#o.hint?.(response) ?? "", asked.secrets);
    const status = response.status;
    const retryAfterMs = waitAskedFor(rate, this.#now());
    return new HttpApiError(
      `${asked.service} answered ${asked.method} ${safeUrl(asked.url)} with HTTP ${status}` +
        `${words.code ? ` ${words.code}` : ""}${words.message ? `: ${words.message}` : ""}` +
        `${hint ? ` (${hint})` : ""}`,
      {
        status,
        ...(words.code ? { code: words.code } : {}),
        method: asked.method,
        url: asked.url,
        apiMessage: words.message,
        body: text.slice(0, BODY_EXCERPT),
        rate,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        hint,
      },
    );
  }
}

/** True when the API refused for now and said or implied that the same request may work later. */
function askedToWait(e: HttpApiError): boolean {
  return TRY_LATER.has(e.status) || (e.status === 403 && e.rate.remaining === 0);
}

/** `20 s`, `1.5 s`, `250 ms`. */
function seconds(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}
