/**
 * Bounded reading of a webhook body: the raw bytes (never re-serialised, spec §4.2 rule 1), and
 * never more than the limit held in memory, whether the sender announced a length or streamed
 * the body chunked.
 */

/** Largest webhook body accepted (bytes). */
export const MAX_WEBHOOK_BODY = 5 * 1024 * 1024;

/** The body's bytes, or `too_large` as soon as it is known to exceed `maxBytes`. */
export type BoundedBody = { ok: true; bytes: Uint8Array } | { ok: false; reason: "too_large" };

/**
 * Read `request`'s body up to `maxBytes`. A declared `Content-Length` over the limit is refused
 * without reading; a chunked body is cancelled at the first byte past the limit.
 */
export async function readBoundedBody(
  request: Request,
  maxBytes = MAX_WEBHOOK_BODY,
): Promise<BoundedBody> {
  const declared = Number(request.headers.get("content-length") ?? "NaN");
  if (Number.isFinite(declared) && declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    return { ok: false, reason: "too_large" };
  }
  if (!request.body) return { ok: true, bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      return { ok: false, reason: "too_large" };
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return { ok: true, bytes: chunks[0] };
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { ok: true, bytes };
}
