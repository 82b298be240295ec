import assert from "node:assert/strict";
import { printable, printableLines, terminalSafe, withoutColours } from "./printable.ts";

/** Hostile strings an agent, a tracker, a host or a catalog may send, and how they print. */
const HOSTILE: [string, string, string][] = [
  ["plain text and Unicode", "plain text, ünïcode ✓ 日本語 🙂", "plain text, ünïcode ✓ 日本語 🙂"],
  [
    "CSI erase line + cursor up",
    "\x1b[2K\x1b[1A all tasks merged",
    "\\x1b[2K\\x1b[1A all tasks merged",
  ],
  ["OSC 0 window title (BEL)", "\x1b]0;owned\x07", "\\x1b]0;owned\\x07"],
  [
    "OSC 52 clipboard (ST)",
    "\x1b]52;c;Y3VybCBldmlsfHNo\x1b\\",
    "\\x1b]52;c;Y3VybCBldmlsfHNo\\x1b\\",
  ],
  ["DCS", "\x1bP1$qm\x1b\\", "\\x1bP1$qm\\x1b\\"],
  ["hidden text (SGR 8)", "\x1b[8msecret\x1b[0m", "\\x1b[8msecret\\x1b[0m"],
  ["newline, CR, tab", "line\nnext\r\tx", "line\\nnext\\r\\tx"],
  ["CR overwrite", "FAILED\rmerged", "FAILED\\rmerged"],
  ["backspace, NUL, DEL", "back\x08space\x00nul\x7f", "back\\x08space\\x00nul\\u007f"],
  ["C1 CSI and OSC", "c1 \x9b31m \x9d0;t\x9c", "c1 \\u009b31m \\u009d0;t\\u009c"],
  ["bidi override", "abc\u202edcba\u202c", "abc\\u202edcba\\u202c"],
  ["bidi isolates", "\u2066isolate\u2069 \u2067x\u2068", "\\u2066isolate\\u2069 \\u2067x\\u2068"],
  ["bidi marks", "\u200e\u200f\u061c", "\\u200e\\u200f\\u061c"],
  ["zero-width and BOM", "a\u200bb\u200dc\ufeffd\u2060e", "a\\u200bb\\u200dc\\ufeffd\\u2060e"],
  ["soft hyphen", "pay\u00adpal", "pay\\u00adpal"],
  ["line/paragraph separators", "a\u2028b\u2029c", "a\\u2028b\\u2029c"],
  ["tag characters", "ok\u{e0041}\u{e0042}", "ok\\udb40\\udc41\\udb40\\udc42"],
  ["a lone surrogate", "x\ud800y", "x\\ud800y"],
  ["an escape written as text", "\\x1b[2K stays", "\\x1b[2K stays"],
];

Deno.test("printable() escapes what would move the cursor, erase, recolour, retitle, hide or reorder text", () => {
  for (const [what, input, expected] of HOSTILE) {
    const out = printable(input);
    assert.equal(out, expected, what);
    assert.equal(printable(out), out, `${what}: escaping twice changes nothing`);
    // deno-lint-ignore no-control-regex -- the point: no control byte survives
    assert.doesNotMatch(out, /[\x00-\x1f\x7f-\x9f]/, what);
  }
});

Deno.test("printableLines() escapes a block line by line: a CR cannot start a line", () => {
  assert.deepEqual(printableLines("one\r\ntwo\n\x1b[2Kthree\rfake"), [
    "one",
    "two",
    "\\x1b[2Kthree\\rfake",
  ]);
  assert.deepEqual(printableLines(""), [""]);
});

Deno.test("terminalSafe() keeps the program's line breaks, tabs and own colours, and escapes every other control", () => {
  for (const [what, input] of HOSTILE) {
    const out = terminalSafe(input);
    // deno-lint-ignore no-control-regex -- only \t and \n survive
    assert.doesNotMatch(out, /[\x00-\x08\x0b-\x1f\x7f-\x9f]/, what);
    assert.equal(terminalSafe(out), out, `${what}: idempotent`);
  }
  assert.equal(terminalSafe("a\n\tb"), "a\n\tb");
  const red = "\x1b[31mFAILED\x1b[0m \x1b[1mbold\x1b[0m \x1b[2mdim\x1b[0m";
  assert.equal(terminalSafe(red, { keepColours: true }), red);
  assert.equal(terminalSafe(red), red.replaceAll("\x1b", "\\x1b"), "colours off: escaped");
  // Only the palette's own sequences: conceal, cursor moves and OSC are escaped even then.
  assert.equal(
    terminalSafe("\x1b[8mx\x1b[2K\x1b]0;t\x07\x1b[31;1m", { keepColours: true }),
    "\\x1b[8mx\\x1b[2K\\x1b]0;t\\x07\\x1b[31;1m",
  );
});

Deno.test("terminalSafe() leaves a JSON line valid JSON with the same value", () => {
  const value = { s: "\x1b]52;c;eA==\x07 \x9b2K \u202e \u2028 \u{e0041} ok" };
  const line = JSON.stringify(value, null, 2);
  const out = terminalSafe(line);
  assert.deepEqual(JSON.parse(out), value);
  // deno-lint-ignore no-control-regex -- nothing raw reaches the terminal
  assert.doesNotMatch(out, /[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e\u2028]/);
});

Deno.test("withoutColours(): colour and style sequences go, every other control stays for printable() to show", () => {
  const cases: [string, string][] = [
    [
      "\x1b[0m\x1b[32mok\x1b[0m | 2 passed | 0 failed \x1b[0m\x1b[38;5;245m(717ms)\x1b[0m",
      "ok | 2 passed | 0 failed (717ms)",
    ],
    ["\x1b[1;31mFAIL\x1b[m", "FAIL"],
    ["\x1b[38:2:255:0:0mtruecolour", "truecolour"],
    // Not style: a screen clear, a cursor move, a title, a lone ESC — kept, and escaped after.
    ["\x1b[2Jcleared", "\x1b[2Jcleared"],
    ["\x1b[1Aup", "\x1b[1Aup"],
    ["\x1b]0;title\x07x", "\x1b]0;title\x07x"],
    ["\x1b[32", "\x1b[32"],
  ];
  for (const [text, expected] of cases) {
    assert.equal(withoutColours(text), expected, JSON.stringify(text));
  }
  assert.equal(printable(withoutColours("\x1b[31mred\x1b[0m\x1b[2J")), "red\\x1b[2J");
});
