/**
 * Every request body is bounded while it is read (docs/security.md): a declared
 * `Content-Length` over the limit is refused before a byte is read, and a chunked (or lying)
 * body is counted as it streams in and refused with 413 the moment it passes the limit, so no
 * route ever buffers more than its limit. The bytes read are handed on as the request's body,
 * so handlers read it as usual. A client that disconnects mid-body ends its request quietly.
 */
import { concatBytes } from "../util/bytes.ts";
import type { MiddlewareHandler } from "hono";
import { HttpError } from "./errors.ts";

/** Largest JSON body (1 MiB). */
export const MAX_JSON_BODY = 1 << 20;
/** Largest webhook delivery (5 MiB): tracker payloads carry whole issues and diffs. */
export const MAX_WEBHOOK_BODY = 5 << 20;

/** Thrown when a client sent more than `limit` bytes (declared or streamed). */
export function bodyTooLarge(limit: number): HttpError {
  return new HttpError(
    413,
    "body_too_large",
    `request body over ${limit} bytes (${limit >> 20} MiB): send less`,
  );
}

/**
 * Read `body` into memory, at most `limit` bytes: 413 as soon as it passes the limit (the
 * stream is cancelled, nothing more is read), 400 `body_incomplete` when the client goes away.
 * The reader keeps its lock: the stream is spent (or cancelled) and nobody reads it again.
 */
async function readBounded(
  body: ReadableStream<Uint8Array>,
  limit: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    let step: ReadableStreamReadResult<Uint8Array>;
    try {
      step = await reader.read();
    } catch {
      throw incomplete();
    }
    if (step.done) break;
    size += step.value.length;
    if (size > limit) {
      reader.cancel().catch(() => {});
      throw bodyTooLarge(limit);
    }
    chunks.push(step.value);
  }
  return concatBytes(chunks, size);
}

function incomplete(): HttpError {
  return new HttpError(
    400,
    "body_incomplete",
    "the client closed the connection before the body ended",
  );
}

/**
 * The body of `request` (undefined when it has none), at most `limit` bytes. A declared
 * `Content-Length` over the limit is refused before a byte is read; one within it frames the
 * body (the HTTP server reads exactly that many bytes), so the body is taken whole in one step,
 * without a stream. A chunked body is counted as it streams in ({@link readBounded}).
 */
async function readBody(
  request: Request,
  limit: number,
): Promise<Uint8Array<ArrayBuffer> | undefined> {
  const declared = request.headers.get("content-length");
  const length = declared === null ? NaN : Number(declared);
  if (Number.isSafeInteger(length) && !request.headers.has("transfer-encoding")) {
    if (length > limit) throw bodyTooLarge(limit);
    if (length === 0) return undefined;
    let bytes: Uint8Array<ArrayBuffer>;
    try {
      bytes = await request.bytes();
    } catch {
      throw incomplete();
    }
    if (bytes.length > limit) throw bodyTooLarge(limit); // not framed as declared: refuse anyway
    return bytes;
  }
  const body = request.body;
  return body ? await readBounded(body, limit) : undefined;
}

/** Context variables set by {@link boundedBody}. */
export interface BoundedBodyVariables {
  /** The bytes of a signed delivery's body, as read (and bounded) by {@link boundedBody}. */
  deliveryBody?: Uint8Array<ArrayBuffer>;
}

/** Options of {@link boundedBody}. */
export interface BoundedBodyOptions {
  /** Largest body in bytes (the route's `bodyLimit`). */
  limit: number;
  /** Hand the bytes to the handler as `deliveryBody` instead of as the request's body. */
  signedDelivery?: boolean;
}

/**
 * Hono middleware bounding a route's request body to `limit` bytes (413). A signed delivery's
 * bytes are handed to its route as the `deliveryBody` variable, read once: that route reads
 * nothing else of the body. Every other request gets a new `Request` over the bytes read, so its
 * handler reads the body as usual.
 */
export function boundedBody(
  options: BoundedBodyOptions,
): MiddlewareHandler<{ Variables: BoundedBodyVariables }> {
  const { limit, signedDelivery = false } = options;
  return async function boundedBodyMiddleware(c, next) {
    const raw = c.req.raw;
    const bytes = await readBody(raw, limit);
    if (!bytes) return await next();
    // A GET or HEAD cannot carry a body in a Request: it was bounded and is dropped.
    if (raw.method === "GET" || raw.method === "HEAD") return await next();
    if (signedDelivery) {
      c.set("deliveryBody", bytes);
      return await next();
    }
    c.req.raw = new Request(raw.url, {
      method: raw.method,
      headers: raw.headers,
      body: bytes,
    });
    await next();
  };
}
