/**
 * The bodies of earlier GET answers with their validators (`ETag`, `Last-Modified`), keyed by
 * URL, so the next GET of the same URL is conditional: an unchanged resource answers 304 and the
 * remembered body is used (a 304 costs GitHub no rate limit). Least recently used entries go
 * first once the cache is full. One cache per client: a client is one identity.
 */

/** One remembered answer. */
export interface CachedAnswer {
  etag?: string;
  lastModified?: string;
  body: Uint8Array;
  headers: Headers;
}

/** A bounded, least-recently-used map of URL to {@link CachedAnswer}. */
export class ConditionalCache {
  readonly #entries = new Map<string, CachedAnswer>();
  readonly #capacity: number;

  /** Remember at most `capacity` answers (at least 1). */
  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`a conditional cache holds at least 1 answer, not ${capacity}`);
    }
    this.#capacity = capacity;
  }

  /** The remembered answer of `url` (it becomes the most recently used). */
  get(url: string): CachedAnswer | undefined {
    const hit = this.#entries.get(url);
    if (hit) {
      this.#entries.delete(url);
      this.#entries.set(url, hit);
    }
    return hit;
  }

  /** The request headers that make a GET of `url` conditional (none when nothing is known). */
  validators(url: string): Record<string, string> {
    const hit = this.#entries.get(url);
    if (hit?.etag) return { "if-none-match": hit.etag };
    if (hit?.lastModified) return { "if-modified-since": hit.lastModified };
    return {};
  }

  /** Remember `body` of a 200 to a GET of `url` when it carries a validator; else forget `url`. */
  remember(url: string, headers: Headers, body: Uint8Array): void {
    this.#entries.delete(url);
    const etag = headers.get("etag") ?? undefined;
    const lastModified = headers.get("last-modified") ?? undefined;
    if (!etag && !lastModified) return;
    this.#entries.set(url, { etag, lastModified, body, headers });
    if (this.#entries.size > this.#capacity) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
  }

  /** How many answers are remembered. */
  get size(): number {
    return this.#entries.size;
  }
}
