/**
 * The one escaping helper for text from elsewhere printed on a terminal — what an agent wrote
 * (its log, its summary), a tracker's ticket, a code host's or provider's answer, a catalog.
 * Control characters (C0 with ESC, BEL, backspace and carriage return; DEL; C1 such as the
 * one-byte CSI), Unicode's invisible format characters (the direction overrides and isolates
 * that reorder what a reader sees, zero-width characters, tag characters), line and paragraph
 * separators and lone surrogates are shown as escapes, so nothing can move the cursor, erase or
 * recolour a line, set the title, write the clipboard (OSC 52), hide, reorder or fake the lines
 * around it. Pure, and idempotent: an escape is plain text, escaped again it is unchanged.
 *
 * - {@link printable}: one line (a newline is shown as `\n` too);
 * - {@link printableLines}: a block meant to span lines, escaped line by line;
 * - {@link printableItem}: an entry of a listing whose further lines are set under its first;
 * - {@link terminalSafe}: the last guard in front of the terminal (lib/cli/terminal.ts), which
 *   keeps the line breaks and tabs of the program's own output and its own colours.
 */

/** Controls, invisible format characters, line/paragraph separators, lone surrogates. */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

const NAMED: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * How `c` (one code point) is written: `\n`, `\x1b` (C0), else `\uXXXX` per UTF-16 unit
 * (`\u009b`, `\u202e`, `\udb40\udc41`), which JSON and JavaScript read back as `c`.
 */
function escapeOne(c: string): string {
  const named = NAMED[c];
  if (named) return named;
  const code = c.charCodeAt(0);
  if (code < 0x20) return `\\x${code.toString(16).padStart(2, "0")}`;
  let out = "";
  for (let i = 0; i < c.length; i++) out += `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/** `text` as one line with every unsafe character written as an escape (`\x1b`, `\n`, `\u202e`). */
export function printable(text: string): string {
  return text.replace(UNSAFE, escapeOne);
}

/**
 * A block of `text` meant to span lines (a log's tail, a multi-line message): one escaped line
 * per line of it (`\n` or `\r\n` end a line; a lone `\r` is escaped, never a line's start).
 */
export function printableLines(text: string): string[] {
  return text.split(/\r?\n/).map(printable);
}

/**
 * `text` as an item of a listing, escaped: its first line after `indent`, any further line set
 * under it behind `│`, so a line break in what someone else wrote never starts a line that
 * reads as the program's own.
 */
export function printableItem(text: string, indent = ""): string[] {
  const [first, ...rest] = printableLines(text);
  return [indent + first, ...rest.map((l) => `${indent}  │ ${l}`)];
}

/** A complete SGR sequence (colour, bold, underline): style only, it moves and erases nothing. */
// deno-lint-ignore no-control-regex -- ESC starts the sequences this matches
const SGR = /\x1b\[[0-9;:]*m/g;

/**
 * `text` without its colour and style sequences, for a line of someone else's output shown as
 * text (a test runner's `\x1b[32mok\x1b[0m` reads `ok`): what they hide is nothing, and escaped
 * they are noise. Every other control is left for {@link printable} to escape.
 */
export function withoutColours(text: string): string {
  return text.replace(SGR, "");
}

/** Options of {@link terminalSafe}. */
export interface TerminalSafeOptions {
  /** Keep the colours the program itself writes (`colour` of lib/cli/command.ts). */
  keepColours?: boolean;
}

/** The SGR sequences `colour` writes: reset, bold, dim, red, green, yellow. Nothing else. */
// deno-lint-ignore no-control-regex -- ESC starts the sequences this matches
const OWN_COLOUR = /\x1b\[(?:0|1|2|31|32|33)m/y;

/**
 * Output of the program on its way to the terminal: everything {@link printable} escapes but the
 * line breaks and tabs, and (with `keepColours`) the program's own colour sequences. A JSON line
 * stays valid JSON: JSON text holds no raw C0 control, and every other escape is `\uXXXX`.
 */
export function terminalSafe(text: string, options: TerminalSafeOptions = {}): string {
  let out = "";
  let from = 0;
  for (const m of text.matchAll(UNSAFE)) {
    const c = m[0];
    if (c === "\n" || c === "\t") continue;
    const at = m.index!;
    if (at < from) continue; // inside a colour sequence kept whole
    if (c === "\x1b" && options.keepColours) {
      OWN_COLOUR.lastIndex = at;
      const own = OWN_COLOUR.exec(text);
      if (own) {
        out += text.slice(from, at + own[0].length);
        from = at + own[0].length;
        continue;
      }
    }
    out += text.slice(from, at) + escapeOne(c);
    from = at + c.length;
  }
  return from === 0 ? text : out + text.slice(from);
}
