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
  return {
    push(text: string) {
      let s = rest + text;
      // A trailing "\r" may be the first half of a "\r\n" split across chunks: hold it back.
      const held = s.endsWith("\r") ? "\r" : "";
      if (held) s = s.slice(0, -1);
      const parts = s.split(/\r\n|\n|\r/);
      rest = parts.pop()! + held;
      for (const p of parts) onLine(p);
      while (rest.length > MAX_LINE_CHARS) {
        onLine(rest.slice(0, MAX_LINE_CHARS));
        rest = rest.slice(MAX_LINE_CHARS);
      }
    },
    flush() {
      if (rest) onLine(rest.replace(/\r$/, ""));
      rest = "";
    },
  };
}
