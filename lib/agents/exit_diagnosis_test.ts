import assert from "node:assert/strict";
import { logParserFor } from "./adapters/mod.ts";
import { parseAnyLog } from "./adapters/generic.ts";
import { permanentExit, saidOn } from "./exit_diagnosis.ts";

/** The events of a log tail as the adapter reads it. */
const tailOf = (adapter: string, lines: string[]) => logParserFor(adapter)(lines.join("\n"));

const GEMINI_401 =
  '{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: {\\"error\\":{\\"code\\":401,\\"message\\":\\"API key not valid. Please pass a valid API key.\\",\\"status\\":\\"UNAUTHENTICATED\\"}}]"}}';
const CODEX_401 =
  '{"type":"error","message":"unexpected status 401 Unauthorized: Incorrect API key provided."}';

// [name, adapter, exit code, log tail, expected cause (undefined: retryable), expected words]
const CASES: [string, string, number, string[], string | undefined, string | undefined][] = [
  ["gemini 41: no usable auth", "gemini", 41, ["Invalid auth method selected."], "auth", undefined],
  ["gemini 55: untrusted folder", "gemini", 55, [], "trust", undefined],
  ["gemini 52: bad settings", "gemini", 52, [], "config", undefined],
  ["gemini 42: bad input", "gemini", 42, [], "input", undefined],
  [
    "gemini's 401 inside its JSON result",
    "gemini",
    1,
    [GEMINI_401],
    "auth",
    "API key not valid. Please pass a valid API key.",
  ],
  [
    "gemini's 401 with its stderr report after the JSON result (the streams' order varies)",
    "gemini",
    1,
    [
      GEMINI_401,
      "Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-Turn.json " +
      '_ApiError: {"error":{"code":401,"message":"API key not valid. Please pass a valid API key.","status":"UNAUTHENTICATED"}}',
    ],
    "auth",
    "API key not valid. Please pass a valid API key.",
  ],
  [
    "codex's 401",
    "codex",
    1,
    ["working", CODEX_401],
    "auth",
    "unexpected status 401 Unauthorized: Incorrect API key provided.",
  ],
  ["an unknown model", "codex", 1, ['{"code":"model_not_found"}'], "model", undefined],
  [
    "gemini run by a generic command: its auth message",
    "generic",
    41,
    ["YOLO mode is enabled.", "Invalid auth method selected."],
    "auth",
    "Invalid auth method selected.",
  ],
  ["41 of another CLI is its own business", "claude", 41, ["bye"], undefined, undefined],
  ["a crash is retried", "codex", 1, ["panicked at core/src/x.rs"], undefined, undefined],
  ["exit 0 is never permanent", "gemini", 0, ["UNAUTHENTICATED"], undefined, undefined],
  [
    "a test's output naming an invalid API key (a tool's output, not the CLI's word)",
    "claude",
    1,
    [
      JSON.stringify({
        type: "user",
        message: {
          role: "user",
          content: [{
            type: "tool_result",
            tool_use_id: "toolu_1",
            content: "FAIL test_auth: expected 'Incorrect API key provided' (401 Unauthorized)",
          }],
        },
      }),
      "Claude Code exited: the session ended before the agent reported",
    ],
    undefined,
    undefined,
  ],
  [
    "the model writing about an unknown model",
    "codex",
    1,
    [
      JSON.stringify({
        type: "item.completed",
        item: { type: "agent_message", text: "The model gpt-x does not exist, so I used another" },
      }),
    ],
    undefined,
    undefined,
  ],
];

for (const [name, adapter, code, tail, cause, said] of CASES) {
  Deno.test(`permanentExit(): ${name}`, () => {
    const verdict = permanentExit(adapter, code, tailOf(adapter, tail));
    assert.equal(verdict?.cause, cause);
    if (said !== undefined) assert.equal(verdict?.said, said);
    if (verdict) assert.ok(verdict.fix.length > 0);
  });
}

Deno.test("saidOn() keeps plain lines and unwraps JSON error messages", () => {
  const said = (line: string) => saidOn(parseAnyLog(line)[0]);
  assert.equal(said("  Error: boom "), "Error: boom");
  assert.equal(said('{"message":"m"}'), "m");
  assert.equal(said('{"error":{"message":"e"}}'), "e");
  assert.equal(said("{not json"), "{not json");
  assert.equal(said('{"other":1}'), '{"other":1}');
});
