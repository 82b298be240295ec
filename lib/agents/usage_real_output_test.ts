/**
 * The usage parsers on lines copied from the real CLIs (Codex 0.169's session record and JSONL,
 * Gemini CLI 0.61's stream-json result) as they ran against tests/fakes/ stand-ins.
 */
import assert from "node:assert/strict";
import { codexAdapter } from "./adapters/codex.ts";
import { parseCodexLog, parseCodexSessionRecord } from "./adapters/codex_log.ts";
import { parseGeminiLog } from "./adapters/gemini_log.ts";
import { usageOf } from "./usage.ts";

const CODEX_LOG = [
  '{"type":"thread.started","thread_id":"01a20776-5e03-7ad2-9475-2e25749a6579"}',
  '{"type":"turn.started"}',
  '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"All done."}}',
  '{"type":"turn.completed","usage":{"input_tokens":4000,"cached_input_tokens":1000,"cache_write_input_tokens":0,"output_tokens":120,"reasoning_output_tokens":40}}',
].join("\n");

const CODEX_RECORD = [
  '{"timestamp":"2026-11-23T08:12:07.772Z","type":"turn_context","payload":{"turn_id":"01a20776-5e5e","model":"gpt-6.1-sol","cwd":"/tmp/9b/repo"}}',
  '{"timestamp":"2026-11-23T08:12:07.902Z","type":"token_usage_record","payload":{"turn_id":"01a20776-5e5e","usage":{"input_tokens":2000,"cached_input_tokens":500,"cache_write_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":20,"total_tokens":2060}}}',
  '{"timestamp":"2026-11-23T08:12:08.229Z","type":"token_usage_record","payload":{"turn_id":"01a20776-5e5e","usage":{"input_tokens":2000,"cached_input_tokens":500,"cache_write_input_tokens":0,"output_tokens":60,"reasoning_output_tokens":20,"total_tokens":2060}}}',
].join("\n");

const GEMINI_RESULT =
  '{"type":"result","timestamp":"2026-11-23T08:14:26.715Z","status":"success","stats":{"total_tokens":9180,"input_tokens":9000,"output_tokens":150,"cached":3000,"input":6000,"duration_ms":2415,"tool_calls":1,"models":{"gemini-3.5-flash-lite":{"total_tokens":3060,"input_tokens":3000,"output_tokens":50,"cached":1000,"input":2000},"gemini-3.1-pro-preview":{"total_tokens":6120,"input_tokens":6000,"output_tokens":100,"cached":2000,"input":4000}}}}';

Deno.test("codex: the session record gives the model Codex used; cached input is discounted", () => {
  const usage = usageOf(parseCodexLog(CODEX_LOG), parseCodexSessionRecord(CODEX_RECORD));
  // gpt-6.1-sol: $2 input, $0.10 cached input, $10 output per million tokens, per response.
  const perResponse = 1500 * 2 + 500 * 0.1 + 60 * 10;
  assert.deepEqual(usage, {
    microUsd: 2 * perResponse,
    byModel: {
      "gpt-6.1-sol": {
        inputTokens: 4000,
        cachedInputTokens: 1000,
        outputTokens: 120,
        microUsd: 2 * perResponse,
      },
    },
    source: "estimated",
  });
});

Deno.test("codex: the record is located by the log's thread id under CODEX_HOME", () => {
  const events = parseCodexLog(CODEX_LOG);
  assert.equal(
    events.find((e) => e.kind === "session")?.id,
    "01a20776-5e03-7ad2-9475-2e25749a6579",
  );
  assert.deepEqual(codexAdapter.sessionRecord!(events, { CODEX_HOME: "/c", HOME: "/h" }), {
    dir: "/c/sessions",
    suffix: "-01a20776-5e03-7ad2-9475-2e25749a6579.jsonl",
  });
  assert.equal(
    codexAdapter.sessionRecord!(events, { HOME: "/h" })!.dir,
    "/h/.codex/sessions",
  );
  assert.equal(codexAdapter.sessionRecord!(parseCodexLog("no thread"), { HOME: "/h" }), undefined);
});

Deno.test("gemini: each routed model is priced with its cached input and thinking tokens", () => {
  const usage = usageOf(parseGeminiLog(`{"type":"init","model":"auto"}\n${GEMINI_RESULT}\n`));
  assert.ok(usage);
  // flash-lite: $0.25 / $0.025 cached / $1.5; gemini-3.1-pro: $2 / $0.2 / $12. Thinking
  // tokens (total − input − output) are billed as output.
  const lite = 2000 * 0.25 + 1000 * 0.025 + 60 * 1.5;
  const pro = 4000 * 2 + 2000 * 0.2 + 120 * 12;
  assert.deepEqual(usage.byModel, {
    "gemini-3.5-flash-lite": {
      inputTokens: 3000,
      cachedInputTokens: 1000,
      outputTokens: 60,
      microUsd: Math.round(lite),
    },
    "gemini-3.1-pro-preview": {
      inputTokens: 6000,
      cachedInputTokens: 2000,
      outputTokens: 120,
      microUsd: Math.round(pro),
    },
  });
  assert.equal(usage.microUsd, Math.round(lite) + Math.round(pro));
});
