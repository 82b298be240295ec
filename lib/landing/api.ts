/**
 * Calling a code host's API (GitHub REST v3, GitLab REST v4) politely: every GET is conditional
 * (the ETag of the last answer goes out as `If-None-Match`; a 304 costs GitHub no rate limit and
 * returns the remembered body), the rate-limit headers are read on every answer (the trackers'
 * parser, lib/trackers/http.ts), pages are followed (`Link: rel="next"`, `X-Next-Page`), and a
 * failure is one {@link HostApiError} carrying the status, the host's own message and, on GitHub,
 * the permission the token lacks (`X-Accepted-GitHub-Permissions`).
 */
import { type RateLimit, rateLimitOf, redact, TrackerApiError } from "../trackers/http.ts";

/** What the clients need to make calls (tests inject `fetch` and the clock). */
export interface HostDeps {
  fetch: typeof fetch;
  now: () => number;
  /** Per-request timeout (default 20 s). */
  timeoutMs?: number;
}

/** A host API call that failed. */
export class HostApiError extends TrackerApiError {
  constructor(
    message: string,
    status: number,
    rate: RateLimit = {},
    /** The host's own words (`message` of its error body). */
    readonly hostMessage = "",
    /** GitHub's `X-Accepted-GitHub-Permissions` on a 403: what the token would need. */
    readonly neededPermission = "",
  ) {
    super(message, status, rate);
    this.name = "HostApiError";
  }
}

/** One answer: its JSON, headers and rate-limit facts. */
export interface HostAnswer {
  status: number;
  json: unknown;
  headers: Headers;
  rate: RateLimit;
}

/** Bodies remembered for conditional requests, at most. */
const CACHE_ENTRIES = 1000;

/** Pages followed by {@link HostApi.getAll}, at most. */
const MAX_PAGES = 20;

/** The host's message in an error body (`{"message": …}`, GitLab's `{"error": …}` or field map). */
function hostMessageOf(text: string): string {
  try {
    const body = JSON.parse(text);
    const m = body?.message ?? body?.error_description ?? body?.error;
    if (typeof m === "string") {
      const details = Array.isArray(body.errors)
        ? body.errors.map((e: { message?: string }) => e?.message).filter(Boolean)
        : [];
      return details.length > 0 ? `${m}: ${details.join("; ")}` : m;
    }
    if (m && typeof m === "object") return JSON.stringify(m).slice(0, 300);
  } catch { /* not JSON */ }
  return text.slice(0, 200).trim();
}

/** The `rel="next"` URL of a `Link` header. */
function nextLink(link: string | null): string | undefined {
  for (const part of (link ?? "").split(",")) {
    const m = /<([^>]+)>;\s*rel="next"/.exec(part);
    if (m) return m[1];
  }
  return undefined;
}

/** One host's API at one base URL, as one identity. */
export class HostApi {
  readonly #base: string;
  readonly #headers: () => Record<string, string>;
  readonly #deps: HostDeps;
  readonly #product: string;
  readonly #cache = new Map<string, { etag: string; json: unknown; headers: Headers }>();
  /** The rate-limit facts of the last answer. */
  rate: RateLimit = {};

  /** `headers` is asked at every call, so a rotated token is used at once. */
  constructor(
    base: string,
    headers: () => Record<string, string>,
    deps: HostDeps,
    product: string,
  ) {
    this.#base = base.replace(/\/+$/, "");
    this.#headers = headers;
    this.#deps = deps;
    this.#product = product;
  }

  /** The absolute URL of `path` (an absolute URL stays as it is). */
  url(path: string): string {
    return /^https?:\/\//.test(path) ? path : `${this.#base}${path}`;
  }

  /** A conditional GET: an unchanged resource answers 304 and its remembered body. */
  async get(path: string): Promise<HostAnswer> {
    const url = this.url(path);
    const cached = this.#cache.get(url);
    const res = await this.#fetch("GET", url, undefined, cached?.etag);
    if (res.status === 304 && cached) {
      await res.body?.cancel();
      return { status: 304, json: cached.json, headers: cached.headers, rate: this.rate };
    }
    const answer = await this.#read("GET", url, res);
    const etag = res.headers.get("etag");
    if (etag) {
      this.#cache.delete(url);
      this.#cache.set(url, { etag, json: answer.json, headers: res.headers });
      if (this.#cache.size > CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value!);
    }
    return answer;
  }

  /** Every page of a list (`Link: rel="next"` or `X-Next-Page`), concatenated. */
  async getAll(path: string): Promise<unknown[]> {
    const out: unknown[] = [];
    let url: string | undefined = this.url(path);
    for (let page = 0; url && page < MAX_PAGES; page++) {
      const answer = await this.get(url);
      if (Array.isArray(answer.json)) out.push(...answer.json);
      const next: string | undefined = nextLink(answer.headers.get("link")) ??
        (answer.headers.get("x-next-page")
          ? withPage(url, answer.headers.get("x-next-page")!)
          : undefined);
      url = next;
    }
    return out;
  }

  /** A request with a JSON body (POST, PUT, PATCH, DELETE). */
  async send(method: string, path: string, body?: unknown): Promise<HostAnswer> {
    const url = this.url(path);
    const res = await this.#fetch(
      method,
      url,
      body === undefined ? undefined : JSON.stringify(body),
    );
    return await this.#read(method, url, res);
  }

  async #fetch(method: string, url: string, body?: string, etag?: string): Promise<Response> {
    const headers: Record<string, string> = { ...this.#headers() };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (etag) headers["if-none-match"] = etag;
    try {
      const res = await this.#deps.fetch(url, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(this.#deps.timeoutMs ?? 20_000),
      });
      this.rate = rateLimitOf(res.headers, this.#deps.now());
      return res;
    } catch (e) {
      throw new HostApiError(
        `${this.#product} did not answer ${method} ${redact(url)}: ${(e as Error).message}`,
        0,
      );
    }
  }

  async #read(method: string, url: string, res: Response): Promise<HostAnswer> {
    const text = await res.text();
    if (!res.ok) {
      const said = hostMessageOf(text);
      const needed = res.headers.get("x-accepted-github-permissions") ?? "";
      throw new HostApiError(
        `${this.#product} answered ${method} ${redact(url)} with HTTP ${res.status}` +
          `${said ? `: ${said}` : ""}${needed ? ` (the token needs ${needed})` : ""}`,
        res.status,
        this.rate,
        said,
        needed,
      );
    }
    let json: unknown = null;
    if (text !== "") {
      try {
        json = JSON.parse(text);
      } catch {
        throw new HostApiError(
          `${this.#product} answered ${method} ${redact(url)} with a body that is not JSON`,
          res.status,
          this.rate,
        );
      }
    }
    return { status: res.status, json, headers: res.headers, rate: this.rate };
  }
}

function withPage(url: string, page: string): string {
  const u = new URL(url);
  u.searchParams.set("page", page);
  return u.toString();
}
