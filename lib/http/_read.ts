/** Private helpers of lib/http/client.ts: reading a body up to a limit, an abortable wait. */

/** Read `response`'s body, stopping at `maxBytes` (the rest is cancelled). */
export async function readBody(
  response: Response,
  maxBytes?: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (maxBytes === undefined) {
    return { bytes: new Uint8Array(await response.arrayBuffer()), truncated: false };
  }
  const reader = response.body?.getReader();
  if (!reader) return { bytes: new Uint8Array(), truncated: false };
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  while (true) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > maxBytes) {
      chunks.push(value.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      await reader.cancel();
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) bytes.set(c, at), at += c.length;
  return { bytes, truncated };
}

/** Resolve after `ms`, or reject with the reason when `signal` aborts first. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener("abort", abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}
