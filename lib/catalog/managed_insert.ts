/**
 * Where the `service-managed` block goes in the user's MCP configuration text, and how it is
 * written: pure text placement for lib/catalog/managed_config.ts. The block's value is
 * pretty-printed, indented like its key, with the file's own line ending (`\r\n` in a CRLF file).
 * A new key goes on its own line after the last property — after the rest of that property's
 * line, its comma and its comments, a comment over several lines included — so that nothing the
 * user wrote moves, and nothing the service writes lands inside a comment.
 */
import { createScanner, type Node } from "jsonc-parser";

/** jsonc-parser's token kinds used here (its `SyntaxKind` is a const enum, not importable). */
const CLOSE_BRACE = 2, COMMA = 5, LINE_BREAK = 14, EOF = 17;

/** The key of the block the service owns. */
export const MANAGED_KEY = "service-managed";

/** The line ending the file uses (`\r\n` when its first line ends so). */
export function lineEnding(text: string): string {
  const n = text.indexOf("\n");
  return n > 0 && text[n - 1] === "\r" ? "\r\n" : "\n";
}

/** The whitespace that starts the line holding `offset`. */
export function lineIndent(text: string, offset: number): string {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  return /^[ \t]*/.exec(text.slice(lineStart))![0];
}

/** `value` as pretty JSON whose inner lines sit under `indent`, ending lines with `eol`. */
export function prettyValue(value: unknown, indent: string, eol: string): string {
  return JSON.stringify(value, null, 2).replace(/\n/g, `${eol}${indent}`);
}

/**
 * The offset just after the first line break that follows `from` outside comments and strings,
 * or undefined when the closing brace (or the end) comes first.
 */
function nextLineStart(text: string, from: number): number | undefined {
  const scanner = createScanner(text, false);
  scanner.setPosition(from);
  for (;;) {
    const kind = scanner.scan();
    if (kind === LINE_BREAK) return scanner.getTokenOffset() + scanner.getTokenLength();
    if (kind === EOF || kind === CLOSE_BRACE) return undefined;
  }
}

/**
 * `text` (a JSONC object `root` without a `service-managed` key) with the key added after its
 * last property holding `block`. At most one comma is added, after the last property's value.
 */
export function insertBlock(text: string, root: Node, block: unknown): string {
  const eol = lineEnding(text);
  const last = root.children?.at(-1);
  const close = root.offset + root.length - 1; // the closing brace
  if (!last) {
    // `{}` or `{ /* comments */ }`: the block goes before the closing brace, on its own line.
    const before = text.slice(0, close).replace(/[ \t\r\n]*$/, "");
    return `${before}${eol}  "${MANAGED_KEY}": ${prettyValue(block, "  ", eol)}${eol}` +
      text.slice(close);
  }
  const indent = lineIndent(text, last.offset);
  const valueEnd = last.offset + last.length;
  // Is the last property already followed by a comma (JSONC allows a trailing one)?
  const scanner = createScanner(text, true);
  scanner.setPosition(valueEnd);
  let out = text;
  let shift = 0;
  if (scanner.scan() !== COMMA) {
    out = `${out.slice(0, valueEnd)},${out.slice(valueEnd)}`;
    shift = 1;
  }
  const property = `"${MANAGED_KEY}": ${prettyValue(block, indent, eol)}`;
  const lineStart = nextLineStart(out, valueEnd + shift);
  if (lineStart !== undefined) {
    // Own line, after the rest of the last property's line (its comma, its comments).
    return `${out.slice(0, lineStart)}${indent}${property}${eol}${out.slice(lineStart)}`;
  }
  return `${out.slice(0, close + shift)} ${property}${out.slice(close + shift)}`;
}
