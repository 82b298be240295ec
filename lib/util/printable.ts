/**
 * Text from elsewhere (a catalog, a program's output) made safe to print on a terminal: control
 * characters (ESC sequences, newlines, carriage returns, backspaces, C1 controls) and the Unicode
 * direction overrides that reorder what a reader sees are shown as escapes, so nothing can move
 * the cursor, recolour, hide or reorder the lines around it. Pure.
 */

// deno-lint-ignore no-control-regex -- the control characters are exactly what must be caught
const UNSAFE = /[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/** `text` with every unsafe character written as an escape (`\x1b`, `\n`, `\u202e`). */
export function printable(text: string): string {
  return text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return NAMED[c] ??
      (code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`);
  });
}
