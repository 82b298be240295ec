/**
 * A local stand-in for the OpenAI Responses API as Codex CLI 0.169 calls it: `POST
 * /v1/responses` with `stream: true` answers Server-Sent Events (`response.created`,
 * `response.output_item.added`, `response.output_item.done`, `response.completed` with
 * `usage.{input_tokens, input_tokens_details.cached_tokens, output_tokens,
 * output_tokens_details.reasoning_tokens, total_tokens}`). The answers are scripted: while the
 * request carries fewer tool outputs than there are `commands`, the next command is called
 * through the tool the request offers (Codex's code-mode `exec` custom tool, whose JavaScript
 * calls `tools.exec_command`, or a plain `exec_command` / `shell` function); then the assistant
 * says `finalText`. The Responses WebSocket upgrade (`GET /v1/responses`) answers 426 so a
 * client falls back to HTTP at once. In `auth` mode every call answers 401 `invalid_api_key`;
 * with `limit`, every call answers that limit (./limits.ts). Every request is recorded.
 */
import {
  type FakeServer,
  type RecordedRequest,
  sseFrame,
  sseResponse,
  startRecordingServer,
} from "./_sse_server.ts";
import { type LimitAnswer, limitResponse } from "./limits.ts";

export type { RecordedRequest } from "./_sse_server.ts";

/** Token figures of one scripted response. */
export interface ResponsesUsage {
  input: number;
  cached: number;
  output: number;
  reasoning: number;
}

/** Options of {@link startFakeResponsesApi}. */
export interface FakeResponsesOptions {
  /** Shell commands run one per response, in order, before the final message. */
  commands?: string[];
  finalText?: string;
  /** Usage reported on every response. */
  usage?: ResponsesUsage;
  /** The model named in `response.completed` (default: the model the request asked for). */
  model?: string;
  /** `auth`: every call answers 401 `invalid_api_key`, as OpenAI does for a bad key. */
  mode?: "ok" | "auth";
  /** Answer every responses call with this limit (./limits.ts). */
  limit?: LimitAnswer;
}

type Json = Record<string, unknown>;

/** Every tool the request offers: top-level `tools` and `additional_tools` input items. */
function offeredTools(body: Json): Json[] {
  const out: Json[] = [];
  const walk = (tools: unknown) => {
    for (const t of Array.isArray(tools) ? tools as Json[] : []) {
      if (t.type === "namespace") walk(t.tools);
      else out.push(t);
    }
  };
  walk(body.tools);
  for (const item of Array.isArray(body.input) ? body.input as Json[] : []) {
    if (item.type === "additional_tools") walk(item.tools);
  }
  return out;
}

/** The output item that makes the client run `cmd` with a tool it offered. */
function toolCall(body: Json, cmd: string, n: number): Json {
  const names = new Set(offeredTools(body).map((t) => String(t.name)));
  const id = `call_fake_${n}`;
  if (names.has("exec")) {
    // Code mode: a freeform JavaScript cell whose nested tools run the command.
    const js = `const r = await tools.exec_command(${
      JSON.stringify({ cmd, yield_time_ms: 20_000 })
    });\ntext(r.output ?? JSON.stringify(r));\n`;
    return { type: "custom_tool_call", id: `ctc_${n}`, call_id: id, name: "exec", input: js };
  }
  if (names.has("exec_command")) {
    const args = JSON.stringify({ cmd, yield_time_ms: 20_000 });
    return {
      type: "function_call",
      id: `fc_${n}`,
      call_id: id,
      name: "exec_command",
      arguments: args,
    };
  }
  const args = JSON.stringify({ command: ["bash", "-lc", cmd] });
  return { type: "function_call", id: `fc_${n}`, call_id: id, name: "shell", arguments: args };
}

function toolOutputs(body: Json): number {
  const input = Array.isArray(body.input) ? body.input as Json[] : [];
  return input.filter((i) => typeof i.type === "string" && i.type.endsWith("_call_output")).length;
}

/** Start the stand-in on 127.0.0.1, port 0. */
export function startFakeResponsesApi(options: FakeResponsesOptions = {}): FakeServer {
  const commands = options.commands ?? [];
  const usage = options.usage ?? { input: 2000, cached: 500, output: 60, reasoning: 20 };
  let responses = 0;
  return startRecordingServer((req: RecordedRequest) => {
    const path = req.path;
    if (req.method === "GET" && path.endsWith("/responses")) {
      return Response.json({ error: { message: "websockets are not supported here" } }, {
        status: 426,
      });
    }
    if (req.method !== "POST" || !path.endsWith("/responses")) {
      return Response.json({ error: { message: "Not found", type: "invalid_request_error" } }, {
        status: 404,
      });
    }
    if (options.limit) return limitResponse(options.limit);
    if (options.mode === "auth") {
      return Response.json({
        error: {
          message: "Incorrect API key provided. You can find your API key at " +
            "https://platform.openai.com/account/api-keys.",
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      }, { status: 401 });
    }
    const body = (req.body ?? {}) as Json;
    const n = ++responses;
    const id = `resp_fake_${n}`;
    const done = toolOutputs(body);
    const item = done < commands.length ? toolCall(body, commands[done], n) : {
      type: "message",
      id: `msg_fake_${n}`,
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: options.finalText ?? "Done.", annotations: [] }],
    };
    const model = options.model ?? String(body.model ?? "gpt-6-luna");
    return sseResponse([
      { type: "response.created", response: { id, model, status: "in_progress" } },
      { type: "response.output_item.added", output_index: 0, item },
      { type: "response.output_item.done", output_index: 0, item },
      {
        type: "response.completed",
        response: {
          id,
          model,
          status: "completed",
          usage: {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: usage.cached },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: usage.reasoning },
            total_tokens: usage.input + usage.output,
          },
        },
      },
    ].map((data) => sseFrame(data, data.type)));
  });
}
