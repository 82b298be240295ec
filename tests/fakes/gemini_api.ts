/**
 * A local stand-in for the Gemini API as Gemini CLI 0.61 calls it with an API key:
 * `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` answers Server-Sent Events whose
 * `data:` frames are `GenerateContentResponse` objects (`candidates[].content.parts[]` with `text`
 * or `functionCall`, `finishReason`, `usageMetadata.{promptTokenCount, cachedContentTokenCount,
 * candidatesTokenCount, thoughtsTokenCount, totalTokenCount}`, `modelVersion`);
 * `:generateContent` answers one such object (Gemini CLI's model router and helpers use it) and
 * `:countTokens` a `totalTokens` count. The answers are scripted: while the request carries fewer
 * `functionResponse` parts than there are `commands`, the next command is called with the
 * `run_shell_command` tool; then the model says `finalText`. With `limit`, every model call
 * answers that limit (./limits.ts). Every request is recorded.
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
export interface GeminiUsage {
  prompt: number;
  cached: number;
  candidates: number;
  thoughts: number;
}

/** Options of {@link startFakeGeminiApi}. */
export interface FakeGeminiOptions {
  /** Shell commands run one per response, in order, before the final text. */
  commands?: string[];
  finalText?: string;
  usage?: GeminiUsage;
  /** `auth`: every call answers 401 UNAUTHENTICATED, as Google does for a bad key. */
  mode?: "ok" | "auth";
  /** Answer every model call with this limit (./limits.ts). */
  limit?: LimitAnswer;
}

type Json = Record<string, unknown>;

function functionResponses(body: Json): number {
  let n = 0;
  for (const c of Array.isArray(body.contents) ? body.contents as Json[] : []) {
    for (const p of Array.isArray(c.parts) ? c.parts as Json[] : []) {
      if (p.functionResponse) n++;
    }
  }
  return n;
}

function usageMetadata(u: GeminiUsage): Json {
  return {
    promptTokenCount: u.prompt,
    cachedContentTokenCount: u.cached,
    candidatesTokenCount: u.candidates,
    thoughtsTokenCount: u.thoughts,
    totalTokenCount: u.prompt + u.candidates + u.thoughts,
  };
}

/** Start the stand-in on 127.0.0.1, port 0. */
export function startFakeGeminiApi(options: FakeGeminiOptions = {}): FakeServer {
  const commands = options.commands ?? [];
  const usage = options.usage ?? { prompt: 3000, cached: 1000, candidates: 50, thoughts: 10 };
  return startRecordingServer((req: RecordedRequest) => {
    const m = /\/models\/([^/:]+):(\w+)/.exec(req.path);
    if (req.method !== "POST" || !m) {
      return Response.json({ error: { code: 404, message: "Not found", status: "NOT_FOUND" } }, {
        status: 404,
      });
    }
    if (options.limit) return limitResponse(options.limit);
    if (options.mode === "auth") {
      return Response.json({
        error: {
          code: 401,
          message: "API key not valid. Please pass a valid API key.",
          status: "UNAUTHENTICATED",
        },
      }, { status: 401 });
    }
    const [, model, method] = m;
    const body = (req.body ?? {}) as Json;
    if (method === "countTokens") return Response.json({ totalTokens: usage.prompt });
    const done = functionResponses(body);
    const part = done < commands.length
      ? { functionCall: { name: "run_shell_command", args: { command: commands[done] } } }
      : { text: options.finalText ?? "Done." };
    const answer = (parts: Json[]) => ({
      candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
      usageMetadata: usageMetadata(usage),
      modelVersion: model,
      responseId: `fake-${crypto.randomUUID()}`,
    });
    if (method === "generateContent") {
      // Gemini CLI's model router asks for a JSON complexity verdict: a simple task.
      const verdict = { complexity_reasoning: "a one-file change", complexity_score: 10 };
      return Response.json(answer([{ text: JSON.stringify(verdict) }]));
    }
    if (method !== "streamGenerateContent") {
      return Response.json({ error: { code: 404, message: `no ${method}`, status: "NOT_FOUND" } }, {
        status: 404,
      });
    }
    return sseResponse([sseFrame(answer([part]))]);
  });
}
