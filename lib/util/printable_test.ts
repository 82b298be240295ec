import assert from "node:assert/strict";
import { printable } from "./printable.ts";

Deno.test("printable() escapes what would move the cursor, recolour, hide or reorder text", () => {
  const cases: [string, string][] = [
    ["plain text, ünïcode ✓", "plain text, ünïcode ✓"],
    ["\x1b[2K\x1b[1A covered", "\\x1b[2K\\x1b[1A covered"],
    ["line\nnext\r\tx", "line\\nnext\\r\\tx"],
    ["back\x08space\x00nul\x7f", "back\\x08space\\x00nul\\x7f"],
    ["c1 \x9b31m", "c1 \\x9b31m"],
    ["abc\u202edcba", "abc\\u202edcba"],
    ["\u2066isolate\u2069", "\\u2066isolate\\u2069"],
  ];
  for (const [input, expected] of cases) assert.equal(printable(input), expected);
});
