/**
 * Calling a code host's API (GitHub REST v3, GitLab REST v4) politely, through the program's one
 * HTTP client (lib/http/client.ts): every GET is conditional (the ETag of the last answer goes
 * out as `If-None-Match`; a 304 costs GitHub no rate limit and returns the remembered body), the
 * rate-limit headers are read on every answer, pages are followed (`Link: rel="next"`,
 * `X-Next-Page`), and a failure is one {@link HttpApiError} carrying the status, the host's own
 * message and, on GitHub, the permission the token lacks (`X-Accepted-GitHub-Permissions`, its
 * `hint`).
 */
import { HttpApiError } from "../http/api_error.ts";
import { createHttpClient, type HttpClient } from "../http/client.ts";
import type { HttpAnswer } from "../http/http_answer.ts";
import type { RateLimit } from "../http/rate_limit.ts";

/** What the clients need to make calls (tests inject `fetch` and the clock). */
export interface HostDeps {
  fetch: typeof fetch;
  now: () => number;
  /** Per-request timeout (default 20 s). */
  timeoutMs?: number;
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

/** The `rel="next"` URL of a `Link` header. */
function nextLink(link: string | null): string | undefined {
  for (const part of (link ?? "").split(",")) {
    const m = /<([^>]+)>;\s*rel="next"/.exec(part);
    if (m) return m[1];
  }
  return undefined;
}

/** GitHub names the permission a refused token lacks; the refusal says so. */
function permissionHint(response: Response): string | undefined {
  const needed = response.headers.get("x-accepted-github-permissions");
  return needed ? `the token needs ${needed}` : undefined;
}

/** One host's API at one base URL, as one identity. */
export class HostApi {
  readonly #http: HttpClient;
  /** The rate-limit facts of the last answer. */
  rate: RateLimit = {};

  /** `headers` is asked at every call, so a rotated token is used at once. */
  constructor(
    base: string,
    headers: () => Record<string, string>,
    deps: HostDeps,
    product: string,
  ) {
    this.#http = createHttpClient({
      service: product,
      baseUrl: base,
      headers,
      cacheEntries: CACHE_ENTRIES,
      hint: permissionHint,
      fetch: deps.fetch,
      now: deps.now,
      ...(deps.timeoutMs ? { timeoutMs: deps.timeoutMs } : {}),
    });
  }

  /** The absolute URL of `path` (an absolute URL stays as it is). */
  url(path: string): string {
    return this.#http.url(path);
  }

  /** A conditional GET: an unchanged resource answers 304 and its remembered body. */
  get(path: string): Promise<HostAnswer> {
    return this.#call(path, { method: "GET" });
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
  send(method: string, path: string, body?: unknown): Promise<HostAnswer> {
    return this.#call(path, body === undefined ? { method } : { method, json: body });
  }

  async #call(path: string, init: { method: string; json?: unknown }): Promise<HostAnswer> {
    let answer: HttpAnswer;
    try {
      answer = await this.#http.request(path, init);
    } catch (e) {
      if (e instanceof HttpApiError && e.status !== 0) this.rate = e.rate;
      throw e;
    }
    this.rate = answer.rate;
    return {
      status: answer.status,
      json: answer.json(),
      headers: answer.headers,
      rate: answer.rate,
    };
  }
}

function withPage(url: string, page: string): string {
  const u = new URL(url);
  u.searchParams.set("page", page);
  return u.toString();
}
