/**
 * Each adapter reads its CLI's session log into events once (lib/agents/session_events.ts): the
 * shapes below are real lines of each CLI (Claude Code 2.1.197, Codex 0.169, Gemini CLI 0.61,
 * Aider's text report), and what the readers get from them is asserted event by event.
 */
import assert from "node:assert/strict";
import type { SessionEvent } from "../session_events.ts";
import { aiderAdapter } from "./aider.ts";
import { claudeAdapter } from "./claude.ts";
import { codexAdapter } from "./codex.ts";
import { geminiAdapter } from "./gemini.ts";
import { parseAnyLog } from "./generic.ts";
import { logParserFor } from "./mod.ts";
import { qwenAdapter } from "./qwen.ts";

const j = (v: unknown) => JSON.stringify(v);

/** `[kind, line]` of each event, plus what identifies it. */
function shape(events: SessionEvent[]): unknown[] {
  return events.map((e) => {
    switch (e.kind) {
      case "session":
        return [e.kind, e.line, e.id, e.model];
      case "tool_call":
        return [e.kind, e.line, e.id, e.name];
      case "tool_output":
        return [e.kind, e.line, e.id, e.source, e.text];
      case "error":
        return [e.kind, e.line, e.message];
      case "rate_limit":
        return [e.kind, e.line, e.rule];
      case "usage":
        return [e.kind, e.line, e.models, e.costUsd];
      default:
        return [e.kind, e.line];
    }
  });
}

Deno.test("claude: stream-json becomes session, prose, tool call and output, a throttling signal and the result's usage", () => {
  const log = [
    j({ type: "system", subtype: "init", session_id: "s1", model: "claude-haiku-4-5" }),
    j({
      type: "assistant",
      message: {
        model: "claude-haiku-4-5",
        content: [{ type: "text", text: "Running the 429 tests." }],
      },
    }),
    j({
      type: "assistant",
      message: {
        model: "claude-haiku-4-5",
        content: [{
          type: "tool_use",
          id: "toolu_1",
          name: "Bash",
          input: { command: "deno test" },
        }],
      },
    }),
    j({
      type: "user",
      message: {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [{ type: "text", text: "ok | 3 passed | 0 failed (9ms)" }],
        }],
      },
    }),
    j({
      type: "assistant",
      message: { model: "<synthetic>", content: [{ type: "text", text: "API Error: 429" }] },
      error: "rate_limit",
    }),
    j({
      type: "result",
      subtype: "success",
      is_error: false,
      total_cost_usd: 0.00135,
      modelUsage: { "claude-haiku-4-5": { inputTokens: 1200, outputTokens: 30, costUSD: 0.00135 } },
    }),
  ].join("\n");
  assert.deepEqual(shape(claudeAdapter.parseLog!(log)), [
    ["session", 1, "s1", "claude-haiku-4-5"],
    ["message", 2],
    ["tool_call", 3, "toolu_1", "Bash"],
    ["tool_output", 4, "toolu_1", "claude_tool_result", "ok | 3 passed | 0 failed (9ms)"],
    ["rate_limit", 5, "claude:error_rate_limit"],
    ["message", 6],
    [
      "usage",
      6,
      { "claude-haiku-4-5": { inputTokens: 1200, outputTokens: 30, costUsd: 0.00135 } },
      0.00135,
    ],
  ]);
});

Deno.test("codex: JSONL becomes the thread, command call and output, the model's words, a failed turn and summed turn usage", () => {
  const log = [
    j({ type: "thread.started", thread_id: "th-1" }),
    j({ type: "turn.started" }),
    j({
      type: "item.started",
      item: {
        id: "item_1",
        type: "command_execution",
        command: "go test ./...",
        status: "in_progress",
      },
    }),
    j({
      type: "item.completed",
      item: {
        id: "item_1",
        type: "command_execution",
        aggregated_output: "ok  \tx\t0.01s\n",
        exit_code: 0,
      },
    }),
    j({
      type: "item.completed",
      item: { id: "item_2", type: "agent_message", text: "error 401 handled" },
    }),
    j({
      type: "turn.completed",
      usage: { input_tokens: 1000, cached_input_tokens: 200, output_tokens: 50 },
    }),
    j({ type: "turn.failed", error: { message: "stream disconnected: 429 Too Many Requests" } }),
    j({
      type: "turn.completed",
      usage: { input_tokens: 500, cached_input_tokens: 0, output_tokens: 10 },
    }),
  ].join("\n");
  assert.deepEqual(shape(codexAdapter.parseLog!(log)), [
    ["session", 1, "th-1", undefined],
    ["message", 2],
    ["tool_call", 3, "item_1", "command_execution"],
    ["tool_output", 4, "item_1", "codex_command", "ok  \tx\t0.01s\n"],
    ["message", 5],
    ["message", 6],
    ["error", 7, "stream disconnected: 429 Too Many Requests"],
    ["message", 8],
    [
      "usage",
      8,
      { unknown: { inputTokens: 1500, cachedInputTokens: 200, outputTokens: 60 } },
      undefined,
    ],
  ]);
});

Deno.test("gemini: stream-json becomes session, prose, tool call and output, the provider's own error message and per-model usage", () => {
  const log = [
    j({ type: "init", session_id: "g1", model: "auto" }),
    j({ type: "message", role: "assistant", content: "Tests: 3 passed", delta: true }),
    j({
      type: "tool_use",
      tool_name: "run_shell_command",
      tool_id: "call-1",
      parameters: { command: "npx jest" },
    }),
    j({ type: "tool_result", tool_id: "call-1", status: "error", output: "HTTP 429 in a fixture" }),
    j({
      type: "error",
      severity: "error",
      message: '[API Error: {"error":{"code":401,"message":"API key not valid."}}]',
    }),
    j({
      type: "result",
      status: "success",
      stats: {
        models: {
          "gemini-3.5-flash": {
            total_tokens: 1100,
            input_tokens: 1000,
            output_tokens: 100,
            cached: 0,
            input: 1000,
          },
          "gemini-3-pro": { total_tokens: 0, input_tokens: 0, output_tokens: 0 },
        },
      },
    }),
  ].join("\n");
  assert.deepEqual(shape(geminiAdapter.parseLog!(log)), [
    ["session", 1, "g1", "auto"],
    ["message", 2],
    ["tool_call", 3, "call-1", "run_shell_command"],
    ["tool_output", 4, "call-1", "gemini_tool_output", "HTTP 429 in a fixture"],
    ["error", 5, "API key not valid."],
    ["message", 6],
    ["usage", 6, {
      "gemini-3.5-flash": { inputTokens: 1000, cachedInputTokens: 0, outputTokens: 100 },
    }, undefined],
  ]);
});

Deno.test("aider: plain text lines, and the usage its last Tokens/Cost report states", () => {
  const log = [
    "Main model: claude-3-5-sonnet-20241022 with diff edit format",
    "Applied edit to calc.py",
    "Tokens: 2.3k sent, 120 received. Cost: $0.0087 message, $0.0087 session.",
    "Tokens: 1,200 sent, 80 received. Cost: $0.0048 message, $0.01 session.",
  ].join("\n");
  assert.deepEqual(shape(aiderAdapter.parseLog!(log)), [
    ["text", 1],
    ["text", 2],
    ["text", 3],
    ["text", 4],
    ["usage", 4, { "claude-3-5-sonnet-20241022": { inputTokens: 3500, outputTokens: 200 } }, 0.01],
  ]);
});

Deno.test("qwen: Claude Code's format; usage without an init line is priced as qwen", () => {
  const log = j({
    type: "result",
    subtype: "success",
    is_error: false,
    usage: { input_tokens: 10, output_tokens: 2 },
  });
  assert.deepEqual(shape(qwenAdapter.parseLog!(log)).at(-1), [
    "usage",
    1,
    { qwen: { inputTokens: 10, outputTokens: 2 } },
    undefined,
  ]);
});

Deno.test("generic: every built-in format is recognised; anything else is text or a record", () => {
  const log = [
    "plain output",
    j({
      type: "item.completed",
      item: { id: "i", type: "command_execution", aggregated_output: "done" },
    }),
    j({ type: "tool_result", tool_id: "c", output: "done" }),
    j({ type: "heartbeat", status: "ok", rate_limit: 429 }),
    j({ type: "tool_call", name: "bash", args: "curl → 429" }),
    j({ code: "model_not_found" }),
    j({ message: "m" }),
  ].join("\n");
  assert.deepEqual(shape(parseAnyLog(log)), [
    ["text", 1],
    ["tool_output", 2, "i", "codex_command", "done"],
    ["tool_output", 3, "c", "gemini_tool_output", "done"],
    ["message", 4],
    ["tool_call", 5, undefined, undefined],
    ["record", 6],
    ["record", 7],
  ]);
  assert.equal(logParserFor("generic"), parseAnyLog);
  assert.equal(logParserFor("my-own-cli"), parseAnyLog, "a generic command under its own name");
});
