import assert from "node:assert/strict";
import { logLineMessage, permanentExit } from "./exit_diagnosis.ts";

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
];

for (const [name, adapter, code, tail, cause, said] of CASES) {
  Deno.test(`permanentExit(): ${name}`, () => {
    const verdict = permanentExit(adapter, code, tail);
    assert.equal(verdict?.cause, cause);
    if (said !== undefined) assert.equal(verdict?.said, said);
    if (verdict) assert.ok(verdict.fix.length > 0);
  });
}

Deno.test("logLineMessage() keeps plain lines and unwraps JSON error messages", () => {
  assert.equal(logLineMessage("  Error: boom "), "Error: boom");
  assert.equal(logLineMessage('{"message":"m"}'), "m");
  assert.equal(logLineMessage('{"error":{"message":"e"}}'), "e");
  assert.equal(logLineMessage("{not json"), "{not json");
  assert.equal(logLineMessage('{"other":1}'), '{"other":1}');
});
