/**
 * A local stand-in for the Anthropic Messages API, speaking its wire format: `POST /v1/messages`
 * with `stream: true` answers Server-Sent Events (`message_start`, `content_block_start`,
 * `content_block_delta` with a `text_delta`, `content_block_stop`, `message_delta` with usage,
 * `message_stop`); without `stream` it answers one message object. With a `script`, a request
 * that offers tools (Claude Code's main conversation) is answered with the script's next step — a
 * streamed `Bash` `tool_use` block, or text that ends the turn — by how many `tool_result` blocks it
 * already carries; Claude Code's own Bash tool then runs the command. In `rate_limit` mode every
 * messages call answers 429 with `{"type":"error","error":{"type":"rate_limit_error",…}}` and
 * `retry-after`; in `overloaded` mode every messages call answers 529 `overloaded_error`; with
 * `limit`, every messages call answers that limit (./limits.ts). Any other
 * path answers 404. Every request is recorded.
 */

import { type FakeServer, sseFrame, startRecordingServer } from "./_sse_server.ts";
import { type LimitAnswer, limitResponse } from "./limits.ts";

/** How the fake answers `POST /v1/messages`. */
export type FakeMode = "ok" | "rate_limit" | "overloaded";

export type { RecordedRequest } from "./_sse_server.ts";

/** A running fake; dispose it to stop the server. */
export interface FakeAnthropicApi extends FakeServer {
  mode: FakeMode;
}

/** One scripted assistant turn: run a command with the Bash tool, load a skill, or answer text. */
export type ScriptStep = { bash: string } | { skill: string } | { text: string };

/** Options of `startFakeAnthropicApi`. */
export interface FakeAnthropicOptions {
  mode?: FakeMode;
  /** Text the assistant answers with (requests without tools, or without a script). */
  text?: string;
  /** The turns of the conversation that offers tools, one per response, the last repeated. */
  script?: ScriptStep[];
  inputTokens?: number;
  outputTokens?: number;
  /** Answer every messages call with this limit (./limits.ts). */
  limit?: LimitAnswer;
}

const sse = (event: string, data: unknown) => sseFrame(data, event);

const newId = (prefix: string) =>
  `${prefix}_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;

// The content block of one turn: text in two deltas, or a tool call (Bash, Skill) with its input.
function blockEvents(step: ScriptStep): string[] {
  if (!("text" in step)) {
    const [name, input] = "bash" in step
      ? ["Bash", { command: step.bash, description: "run it" }]
      : ["Skill", { skill: step.skill }];
    return [
      sse("content_block_start", {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: newId("toolu"), name, input: {} },
      }),
      sse("content_block_delta", {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(input) },
      }),
    ];
  }
  const half = Math.ceil(step.text.length / 2);
  return [
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    sse("ping", { type: "ping" }),
    sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: step.text.slice(0, half) },
    }),
    sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: step.text.slice(half) },
    }),
  ];
}

function messageEvents(model: string, step: ScriptStep, input: number, output: number): string {
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id: newId("msg_fake"),
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: input,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
        },
      },
    }),
    ...blockEvents(step),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "text" in step ? "end_turn" : "tool_use", stop_sequence: null },
      usage: { output_tokens: output },
    }),
    sse("message_stop", { type: "message_stop" }),
  ].join("");
}

/** The script's step for a request that already carries `done` tool results. */
function scriptedStep(script: ScriptStep[], body: { messages?: unknown; tools?: unknown }) {
  const messages = Array.isArray(body.messages) ? body.messages as { content?: unknown }[] : [];
  const done = messages.flatMap((m) => Array.isArray(m.content) ? m.content : [])
    .filter((b) => b?.type === "tool_result").length;
  return script[Math.min(done, script.length - 1)];
}

/** Start the fake on 127.0.0.1, port 0 (a free port). */
export function startFakeAnthropicApi(options: FakeAnthropicOptions = {}): FakeAnthropicApi {
  const text = options.text ?? "Done. The task is complete.";
  const input = options.inputTokens ?? 1200;
  const output = options.outputTokens ?? 30;
  const state = { mode: options.mode ?? "ok" as FakeMode };
  const server = startRecordingServer((req) => {
    if (req.method !== "POST" || req.path !== "/v1/messages") {
      return Response.json(
        { type: "error", error: { type: "not_found_error", message: "Not found" } },
        { status: 404 },
      );
    }
    if (options.limit) return limitResponse(options.limit);
    if (state.mode === "overloaded") {
      return Response.json(
        { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
        { status: 529, headers: { "request-id": "req_fake_529" } },
      );
    }
    if (state.mode === "rate_limit") {
      return Response.json({
        type: "error",
        error: {
          type: "rate_limit_error",
          message: "This request would exceed the rate limit for your organization.",
        },
      }, {
        status: 429,
        headers: { "retry-after": "30", "request-id": "req_fake_429" },
      });
    }
    const b = (req.body ?? {}) as { model?: string; stream?: boolean; tools?: unknown[] };
    const model = b.model ?? "claude-sonnet-4-5";
    const offersTools = Array.isArray(b.tools) && b.tools.length > 0;
    const step = options.script?.length && offersTools ? scriptedStep(options.script, b) : { text };
    if (b.stream) {
      return new Response(messageEvents(model, step, input, output), {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    return Response.json({
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text: "text" in step ? step.text : text }],
      stop_reason: "end_turn",
      stop_sequence: null,
      usage: { input_tokens: input, output_tokens: output },
    });
  });
  return {
    url: server.url,
    requests: server.requests,
    get mode() {
      return state.mode;
    },
    set mode(m: FakeMode) {
      state.mode = m;
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}
