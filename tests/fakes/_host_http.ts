/**
 * How the fake code hosts answer (github_api.ts, gitlab_api.ts): JSON with the host's own
 * headers, and conditional GETs as the hosts do them: a 200 carries an `ETag` (GitLab's weak),
 * and the same GET with `If-None-Match` is a 304 with no body. Every request is logged with the
 * fake's own clock and counted as the host counts it against the rate limit (GitHub: a 304 costs
 * nothing; GitLab: every request counts), so tests and the bench can hold the landing to a budget.
 */

/** One request the fake answered. */
export interface HostRequest {
  /** The fake's clock (`Date.now()`) when the request arrived. */
  at: number;
  method: string;
  path: string;
  status: number;
}

/** The fake's request counts. */
export interface HostStats {
  /** Every request answered. */
  requests: number;
  /** Requests answered 304 Not Modified. */
  notModified: number;
  /** Requests charged to the rate limit (GitHub: all but 304s; GitLab: all). */
  charged: number;
}

/** The request log and rate-limit count of one fake host. */
export class HostLedger {
  readonly log: HostRequest[] = [];
  #charged = 0;

  /** `chargeNotModified`: GitLab counts 304s against the limit, GitHub does not. */
  constructor(readonly limit: number, readonly chargeNotModified: boolean) {}

  /** Count an answer with `status`; the requests left in the window after it. */
  charge(status: number): number {
    if (status !== 304 || this.chargeNotModified) this.#charged++;
    return Math.max(0, this.limit - this.#charged);
  }

  /** Log a request answered with `status`. */
  record(at: number, method: string, path: string, status: number): void {
    this.log.push({ at, method, path, status });
  }

  /** The counts so far. */
  stats(): HostStats {
    return {
      requests: this.log.length,
      notModified: this.log.filter((r) => r.status === 304).length,
      charged: this.#charged,
    };
  }
}

/** Options of {@link hostAnswer}. */
export interface AnswerOptions {
  /** GitLab's `W/"…"` ETags. */
  weakEtag?: boolean;
  /** The rate-limit headers of this answer, told whether it is a 304 (so it may go uncharged). */
  rate?: (notModified: boolean) => Record<string, string>;
}

/** A JSON answer to `req` (`headers` are the host's, e.g. its content type). */
export function hostAnswer(
  req: Request,
  status: number,
  body: unknown,
  headers: Record<string, string>,
  options: AnswerOptions = {},
): Response {
  const text = JSON.stringify(body);
  const etag = `${options.weakEtag ? "W/" : ""}"${text.length}-${fnv1a(text)}"`;
  const conditional = req.method === "GET" && status === 200;
  const notModified = conditional && req.headers.get("if-none-match") === etag;
  const h = { ...headers, ...options.rate?.(notModified), ...(conditional ? { etag } : {}) };
  if (notModified) return new Response(null, { status: 304, headers: h });
  return new Response(status === 204 ? null : text, { status, headers: h });
}

/** A short digest (FNV-1a). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16);
}

/** What a fake host records happening, by whom it happened: CI, a person, or the host itself. */
export type FakeEventKind =
  | "opened"
  | "head"
  | "check"
  | "status"
  | "review"
  | "merge_requested"
  | "merged"
  | "closed"
  /** A check (GitLab: a pipeline) was asked to run again on the same commit. */
  | "rerun";

/** Something that happened on a fake host, on its own clock. */
export interface FakeHostEvent {
  /** `Date.now()` when it happened (comparable with a journal row's `ts`). */
  at: number;
  /**
   * `head`: the host saw a new head on a pull request (CI starts on it); `merge_requested`: a
   * merge request (`PUT …/merge`) arrived, whatever its answer.
   */
  kind: FakeEventKind;
  number?: number;
  sha?: string;
  /** E.g. `ci/test:success`, `APPROVED`. */
  detail?: string;
}
