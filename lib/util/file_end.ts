/**
 * The end of a file, read in place: a session log may be as large as its cap, and the readers of
 * its last lines (the terminal's tail, the verification's scan) need only its end.
 */

/**
 * The last `maxBytes` of the file at `path` as text, and whether its beginning was cut; throws
 * when it cannot be opened.
 */
export async function readFileEnd(
  path: string,
  maxBytes: number,
): Promise<{ text: string; cut: boolean }> {
  using file = await Deno.open(path);
  const size = (await file.stat()).size;
  const start = Math.max(0, size - maxBytes);
  await file.seek(start, Deno.SeekMode.Start);
  const buf = new Uint8Array(size - start);
  let at = 0;
  while (at < buf.length) {
    const n = await file.read(buf.subarray(at));
    if (n === null) break;
    at += n;
  }
  return { text: new TextDecoder().decode(buf.subarray(0, at)), cut: start > 0 };
}
