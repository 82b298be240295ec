/** Splitting a stream's decoded text into lines as it arrives (private to lib/process). */

/** A line longer than this is passed on in pieces (hostile output must not grow memory). */
const MAX_LINE_CHARS = 64 * 1024;

/**
 * Splits one stream's decoded text into lines as it arrives: `\n`, `\r\n` and a lone `\r` (a
 * progress bar) end a line, also when a `\r\n` is split across chunks; `flush()` passes on an
 * unterminated last line.
 */
export function lineSplitter(onLine: (line: string) => void) {
  let rest = "";
  // Pieces of MAX_LINE_CHARS go on at once; the end of a whole line too, that of a partial one
  // is kept (returned) until more text arrives.
  const passOn = (line: string, whole: boolean): string => {
    let at = 0;
    while (line.length - at > MAX_LINE_CHARS) {
      onLine(line.slice(at, at + MAX_LINE_CHARS));
      at += MAX_LINE_CHARS;
    }
    const end = line.slice(at);
    if (whole) onLine(end);
    return whole ? "" : end;
  };
  return {
    push(text: string) {
      let s = rest + text;
      // A trailing "\r" may be the first half of a "\r\n" split across chunks: hold it back.
      const held = s.endsWith("\r") ? "\r" : "";
      if (held) s = s.slice(0, -1);
      const parts = s.split(/\r\n|\n|\r/);
      rest = parts.pop()! + held;
      // However the bytes were read, a long line goes on in the same pieces.
      for (const p of parts) passOn(p, true);
      rest = passOn(rest, false);
    },
    flush() {
      if (rest) onLine(rest.replace(/\r$/, ""));
      rest = "";
    },
  };
}
