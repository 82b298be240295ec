import assert from "node:assert/strict";
import { lineWords } from "./line_words.ts";

const E = 1764345600;

Deno.test("lineWords(): a CLI's JSON event is quoted by what it says, a plain line as it is", () => {
  const cases: [string, string, string][] = [
    [
      "Claude Code's synthetic message: its text, not its keys",
      JSON.stringify({
        type: "assistant",
        message: {
          model: "<synthetic>",
          content: [{
            type: "text",
            text: `API Error: Request rejected (429) · Claude AI usage limit reached|${E}`,
          }],
        },
        error: "rate_limit",
      }),
      `API Error: Request rejected (429) · Claude AI usage limit reached|${E}`,
    ],
    [
      "Codex's error event",
      JSON.stringify({
        type: "error",
        message: "You’ve hit your usage limit. Try again at 3:42 PM.",
      }),
      "You’ve hit your usage limit. Try again at 3:42 PM.",
    ],
    [
      "a result line",
      JSON.stringify({
        type: "result",
        is_error: true,
        result: "Claude AI usage limit reached|12",
      }),
      "Claude AI usage limit reached|12",
    ],
    [
      "an error object's message",
      JSON.stringify({
        error: { code: 429, message: "Resource has been exhausted (e.g. check quota)." },
      }),
      "Resource has been exhausted (e.g. check quota).",
    ],
    ["a plain line", "  HTTP/1.1 429 Too Many Requests  ", "HTTP/1.1 429 Too Many Requests"],
    ["JSON with tokens only: the line", '{"error":"rate_limit"}', '{"error":"rate_limit"}'],
    ["not JSON after all", "{not json at all", "{not json at all"],
    ["a JSON string", '"rate limited by the API"', '"rate limited by the API"'],
    ["empty", "", ""],
  ];
  for (const [what, raw, said] of cases) assert.equal(lineWords(raw), said, what);
});

Deno.test("lineWords(): hostile lines — deep, long, many keys — are cut, never thrown on", () => {
  let deep: unknown = { message: "found at the bottom of it" };
  for (let i = 0; i < 5000; i++) deep = { x: deep };
  const deepLine = JSON.stringify(deep);
  assert.equal(lineWords(deepLine), `${deepLine.slice(0, 160)}…`, "past 8 levels: the raw line");
  const long = JSON.stringify({ message: "w ".repeat(10_000) });
  assert.equal(lineWords(long).length, 161);
  assert.ok(lineWords(long).endsWith("…"));
  const wide = JSON.stringify(Object.fromEntries(
    Array.from({ length: 10_000 }, (_, i) => [`k${i}`, i]).concat([["message", "last of many"]]),
  ));
  assert.equal(lineWords(wide, 40), "last of many");
});
