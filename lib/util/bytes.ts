/** Byte helpers shared by the readers that collect a stream in chunks. */

/** The chunks joined into one array of `size` bytes (their total length when omitted). */
export function concatBytes(
  chunks: Uint8Array[],
  size = chunks.reduce((n, c) => n + c.length, 0),
): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
