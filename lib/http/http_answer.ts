/** One answer of lib/http/client.ts: status, headers, rate-limit facts and the body read. */
import { HttpApiError, maskSecrets, safeUrl } from "./api_error.ts";
import type { RateLimit } from "./rate_limit.ts";

/** Characters of an error body kept in {@link HttpApiError.body}. */
export const BODY_EXCERPT = 500;

const decoder = new TextDecoder();

/** What was asked, for messages (the credentials sent, to mask in what comes back). */
export interface Asked {
  service: string;
  method: string;
  url: string;
  secrets: string[];
}

/** What an answer is made of. */
export interface AnswerParts {
  status: number;
  headers: Headers;
  rate: RateLimit;
  body: Uint8Array;
  truncated: boolean;
}

/** One answer: status, headers, rate-limit facts and the body (read in full, or up to `maxBytes`). */
export class HttpAnswer {
  readonly #asked: Asked;

  readonly status: number;
  readonly headers: Headers;
  readonly rate: RateLimit;
  /** The body's bytes (a 304 to a remembered GET: the remembered body). */
  readonly body: Uint8Array;
  /** The body was longer than `maxBytes` and was cut there. */
  readonly truncated: boolean;

  constructor(parts: AnswerParts, asked: Asked) {
    this.status = parts.status;
    this.headers = parts.headers;
    this.rate = parts.rate;
    this.body = parts.body;
    this.truncated = parts.truncated;
    this.#asked = asked;
  }

  /** The body as UTF-8 text. */
  text(): string {
    return decoder.decode(this.body);
  }

  /** The body as JSON (`null` when empty); one that is not JSON is an {@link HttpApiError}. */
  json<T = unknown>(): T {
    const text = this.text();
    if (text === "") return null as T;
    try {
      return JSON.parse(text) as T;
    } catch (e) {
      const a = this.#asked;
      throw new HttpApiError(
        `${a.service} answered ${a.method} ${safeUrl(a.url)} with a body that is not JSON`,
        {
          status: this.status,
          code: "invalid_json",
          method: a.method,
          url: a.url,
          body: maskSecrets(text.slice(0, BODY_EXCERPT), a.secrets),
          rate: this.rate,
          cause: e,
        },
      );
    }
  }
}
