/** The line of a program's output that says what went wrong (pure). */

const ERROR_WORDS =
  /\b(error|fatal|failed|failure|exception|traceback|denied|not found|invalid|unauthori[sz]ed|forbidden|refus\w*|must|cannot|can't|missing)\b/i;

/** An exception's class name, as tracebacks end with it (`ImportError: …`, `IOException`). */
const EXCEPTION_NAME = /\b[A-Z]\w*(?:Error|Exception)\b/;

/** The last line that reads like an error (else the last non-empty line), trimmed. */
export function lastErrorLine(tail: readonly string[] = []): string | undefined {
  const lines = tail.map((l) => l.trim()).filter((l) => l.length > 0);
  return clipLine(errorLine(lines) ?? lines.at(-1));
}

/** The last line that reads like an error, trimmed and cut to 300 characters; else undefined. */
export function errorLine(tail: readonly string[] = []): string | undefined {
  const lines = tail.map((l) => l.trim()).filter((l) => l.length > 0);
  return clipLine(lines.findLast((l) => ERROR_WORDS.test(l) || EXCEPTION_NAME.test(l)));
}

/** `line` cut to 300 characters (with `…`). */
export function clipLine(line: string | undefined): string | undefined {
  return line === undefined ? undefined : line.length > 300 ? line.slice(0, 297) + "…" : line;
}
