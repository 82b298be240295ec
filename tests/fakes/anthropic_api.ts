/**
 * A local stand-in for the Anthropic Messages API, speaking its wire format: `POST /v1/messages`
 * with `stream: true` answers Server-Sent Events (`message_start`, `content_block_start`,
 * `content_block_delta` with a `text_delta`, `content_block_stop`, `message_delta` with usage,
 * `message_stop`); without `stream` it answers one message object. In `rate_limit` mode every
 * messages call answers 429 with `{"type":"error","error":{"type":"rate_limit_error",…}}` and
 * `retry-after`. Any other path answers 404. Every request is recorded.
 */

import { type FakeServer, sseFrame, startRecordingServer } from "./_sse_server.ts";

/** How the fake answers `POST /v1/messages`. */
export type FakeMode = "ok" | "rate_limit";

export type { RecordedRequest } from "./_sse_server.ts";

/** A running fake; dispose it to stop the server. */
export interface FakeAnthropicApi extends FakeServer {
  mode: FakeMode;
}

/** Options of `startFakeAnthropicApi`. */
export interface FakeAnthropicOptions {
  mode?: FakeMode;
  /** Text the assistant answers with. */
  text?: string;
  inputTokens?: number;
  outputTokens?: number;
}

const sse = (event: string, data: unknown) => sseFrame(data, event);

function messageEvents(model: string, text: string, input: number, output: number): string {
  const id = `msg_fake_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const half = Math.ceil(text.length / 2);
  return [
    sse("message_start", {
      type: "message_start",
      message: {
        id,
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
    sse("content_block_start", {
      type: "content_block_start",
      index: 0,
      content_block: { type: "text", text: "" },
    }),
    sse("ping", { type: "ping" }),
    sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: text.slice(0, half) },
    }),
    sse("content_block_delta", {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: text.slice(half) },
    }),
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: output },
    }),
    sse("message_stop", { type: "message_stop" }),
  ].join("");
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
    const b = (req.body ?? {}) as { model?: string; stream?: boolean };
    const model = b.model ?? "claude-sonnet-4-5";
    if (b.stream) {
      return new Response(messageEvents(model, text, input, output), {
        headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
      });
    }
    return Response.json({
      id: "msg_fake",
      type: "message",
      role: "assistant",
      model,
      content: [{ type: "text", text }],
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
