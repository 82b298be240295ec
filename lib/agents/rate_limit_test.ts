import assert from "node:assert/strict";
import { BUILTIN_ADAPTERS, logParserFor } from "./adapters/mod.ts";
import { firstRateLimit, scanLog } from "./rate_limit.ts";

const j = (v: unknown) => JSON.stringify(v);

/** `[name, line, expected rule or null]`: real-shaped lines of the CLIs' logs. */
const CASES: [string, string, string | null][] = [
  // Provider throttling that must match.
  [
    "Claude Code synthetic assistant message with error rate_limit",
    j({
      type: "assistant",
      message: {
        model: "<synthetic>",
        role: "assistant",
        content: [{
          type: "text",
          text: "API Error: Request rejected (429) · This request would exceed the rate limit",
        }],
      },
      error: "rate_limit",
    }),
    "claude:error_rate_limit",
  ],
  [
    "Claude Code result line with api_error_status 429",
    j({ type: "result", is_error: true, api_error_status: 429, result: "API Error: 429" }),
    "claude:api_error_status_429",
  ],
  [
    "Anthropic error body",
    j({
      type: "error",
      error: { type: "rate_limit_error", message: "Number of requests exceeded" },
    }),
    "anthropic:rate_limit_error",
  ],
  [
    "stream-json rate_limit_event rejected",
    j({
      type: "rate_limit_event",
      rate_limit_info: { status: "rejected", resetsAt: 1763724000, rateLimitType: "five_hour" },
    }),
    "claude:rate_limit_event_rejected",
  ],
  [
    "Claude subscription limit",
    "You've hit your limit · resets 3pm (UTC)",
    "claude:usage_limit",
  ],
  [
    "Codex usage limit that names no reset",
    "ERROR: You've hit your usage limit. Upgrade to Plus to continue using Codex, or try again later.",
    "provider:hit_your_limit",
  ],
  [
    "Gemini daily quota",
    "[API Error: You have exhausted your daily quota on this model.]",
    "provider:quota_exceeded",
  ],
  [
    "Claude Code's context window is not a usage limit",
    "Context limit reached · /compact or /clear to continue",
    null,
  ],
  [
    "Gemini quota",
    "[API Error: Quota exceeded for quota metric 'Generate Content']",
    "provider:quota_exceeded",
  ],
  [
    "OpenAI quota",
    "ERROR: You exceeded your current quota, please check your plan",
    "provider:quota_exceeded",
  ],
  [
    "Gemini RESOURCE_EXHAUSTED",
    '{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}',
    "provider:resource_exhausted",
  ],
  [
    "OpenAI error code",
    "stream error: rate_limit_exceeded: Rate limit reached for gpt-5",
    "provider:rate_limit_exceeded",
  ],
  ["HTTP status line", "HTTP/1.1 429 Too Many Requests", "token:429"],
  ["Python traceback tail", "openai.RateLimitError: Error code: 429 - {'error': {}}", "token:429"],
  [
    "rate limit with error context",
    "Error: rate limited by upstream, retrying in 30s",
    "token:rate_limit",
  ],
  [
    "Codex turn failed",
    j({ type: "turn.failed", error: { message: "429 Too Many Requests" } }),
    "token:429",
  ],
  [
    "Gemini stream-json error event",
    j({ type: "error", severity: "error", message: "Request timed out" }),
    "token:timeout",
  ],
  ["401 with status", "request failed with status 401", "token:401"],
  [
    "unauthorized exception",
    "anthropic.AuthenticationError exception: Unauthorized",
    "token:unauthorized",
  ],
  ["504 with http", "http 504 gateway timeout", "token:504"],
  ["413 with code", "code 413: request too large", "token:413"],
  ["timeout with failed", "Connection failed: timeout after 60s", "token:timeout"],
  // Lines that must NOT match.
  [
    "tool result that prints Read 4291 lines",
    j({
      type: "user",
      message: {
        role: "user",
        content: [{
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: "Read 4291 lines; error 429 in fixture",
        }],
      },
    }),
    null,
  ],
  [
    "tool_use naming a file timeout.ts",
    j({
      type: "assistant",
      message: {
        model: "claude-sonnet-4-5",
        content: [{ type: "tool_use", name: "Read", input: { file_path: "src/error/timeout.ts" } }],
      },
    }),
    null,
  ],
  [
    "generic tool_call line",
    j({ type: "tool_call", name: "bash", args: "curl -w '%{http_code}' → 429" }),
    null,
  ],
  [
    "Gemini tool_result",
    j({ type: "tool_result", status: "error", output: "HTTP 429 in test output" }),
    null,
  ],
  ["heartbeat", j({ type: "heartbeat", status: "ok", rate_limit: 429 }), null],
  [
    "Codex command output",
    j({
      type: "item.completed",
      item: { type: "command_execution", aggregated_output: "FAILED 429 timeout" },
    }),
    null,
  ],
  [
    "Codex (older releases) exec_command_end output",
    j({
      id: "0",
      msg: { type: "exec_command_end", stdout: "Error: HTTP 429 in a fixture", exit_code: 1 },
    }),
    null,
  ],
  ["took 429 ms without error context", "took 429 ms", null],
  ["4291 is not 429", "Error: wrote 4291 bytes", null],
  [
    "healthy rate_limit_event",
    j({ type: "rate_limit_event", rate_limit_info: { status: "allowed", resetsAt: 1763724000 } }),
    null,
  ],
  [
    "model prose about a 429 error",
    j({
      type: "assistant",
      message: {
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text: "I fixed the 429 error handling and the timeout." }],
      },
    }),
    null,
  ],
  [
    "successful result mentioning rate limits",
    j({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Added rate limit status codes",
      total_cost_usd: 0.0429,
    }),
    null,
  ],
  [
    "Codex agent message",
    j({ type: "item.completed", item: { type: "agent_message", text: "error 401 handled" } }),
    null,
  ],
  ["a bare timeout word", "set the timeout to 30s", null],
  ["status_code is not the word status", "status_code_429_handler registered", null],
  ["empty line", "", null],
];

for (const [name, line, rule] of CASES) {
  Deno.test(`scanLog(): ${name} ${rule ? `matches ${rule}` : "does not match"}`, () => {
    assert.equal(scanLog(line)[0]?.rule ?? null, rule);
  });
}

Deno.test("scanLog() reports line numbers, lines and categories, and firstRateLimit() skips auth", () => {
  const log = [
    "starting",
    "Error: request failed with status 401",
    "HTTP/1.1 429 Too Many Requests",
  ];
  const matches = scanLog(log.join("\n"));
  assert.deepEqual(matches, [
    { lineNumber: 2, line: log[1], rule: "token:401", category: "auth" },
    { lineNumber: 3, line: log[2], rule: "token:429", category: "rate_limit" },
  ]);
  assert.equal(firstRateLimit(matches)?.lineNumber, 3);
  assert.equal(firstRateLimit(scanLog("all fine")), undefined);
});

for (const adapter of [...BUILTIN_ADAPTERS.map((a) => a.name), "generic"]) {
  Deno.test(`scanLog(): ${adapter}'s reading counts a throttled request and never a heartbeat or a tool's output`, () => {
    const parse = logParserFor(adapter);
    const heartbeat = j({ type: "heartbeat", status: "error", code: 429 });
    const toolCall = j({
      type: "tool_call",
      name: "bash",
      args: "curl -f http://x || echo 'HTTP 429'",
    });
    const toolResult = j({ type: "tool_result", status: "error", output: "Error: HTTP 429" });
    const throttled = "HTTP/1.1 429 Too Many Requests";
    assert.deepEqual(
      scanLog([heartbeat, toolCall, toolResult, throttled].join("\n"), parse)
        .map((m) => [m.lineNumber, m.rule]),
      [[4, "token:429"]],
    );
  });
}
