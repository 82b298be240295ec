/**
 * A local stand-in for Anthropic's Message Batches API, speaking its documented wire format:
 * `POST /v1/messages/batches` (`{"requests": [{"custom_id", "params"}]}`, `x-api-key` and
 * `anthropic-version` headers) answers a Message Batch object — `id` (`msgbatch_…`), `type:
 * "message_batch"`, `processing_status` (`in_progress`, then `ended`), `request_counts`
 * (`processing`, `succeeded`, `errored`, `canceled`, `expired`), `created_at`, `expires_at`,
 * `ended_at`, `cancel_initiated_at`, `archived_at`, `results_url` (null until ended); `GET
 * /v1/messages/batches/<id>` reads it (a look while `hold` is off ends the batch); `GET
 * …/<id>/results` serves the JSONL results, one `{"custom_id", "result"}` per request in an order
 * of their own (`succeeded` with a `message`, `errored` with `{"type": "error", "error": {type,
 * message}}`, `expired`, `canceled`); `POST …/<id>/cancel` makes it `canceling` (the next look
 * ends it with every request `canceled`). Errors are `{"type": "error", "error": {type, message}}`.
 * Each request is answered by `answer`, with the request's prompt. Every call is recorded.
 */
import { type FakeServer, startRecordingServer } from "./_sse_server.ts";

/** How the fake answers one request. */
export type FakeBatchAnswer =
  | { text: string; inputTokens?: number; outputTokens?: number }
  | { error: string }
  | "expired"
  | "canceled";

/** One request as the fake received it. */
export interface FakeBatchRequest {
  custom_id: string;
  model: string;
  system: string;
  user: string;
}

/** Options of {@link startFakeAnthropicBatches}. */
export interface FakeBatchOptions {
  answer: (request: FakeBatchRequest) => FakeBatchAnswer;
  /** The key `x-api-key` must carry (default: any non-empty). */
  apiKey?: string;
}

/** A running fake; dispose it to stop the server. */
export interface FakeAnthropicBatches extends FakeServer {
  /** While true, batches stay `in_progress` however often they are read. */
  hold: boolean;
  /** Batches created, by id. */
  batches: Map<string, { requests: FakeBatchRequest[]; object: Record<string, unknown> }>;
}

type Json = Record<string, unknown>;

const error = (status: number, type: string, message: string) =>
  Response.json({ type: "error", error: { type, message } }, { status });

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** Start the fake on 127.0.0.1, port 0. */
export function startFakeAnthropicBatches(options: FakeBatchOptions): FakeAnthropicBatches {
  const batches: FakeAnthropicBatches["batches"] = new Map();
  const results = new Map<string, string>();
  const state = { hold: false };
  const server = startRecordingServer((req) => {
    const key = req.headers["x-api-key"];
    if (!key || (options.apiKey !== undefined && key !== options.apiKey)) {
      return error(401, "authentication_error", "invalid x-api-key");
    }
    if (!req.headers["anthropic-version"]) {
      return error(400, "invalid_request_error", "anthropic-version: header is required");
    }
    if (req.method === "POST" && req.path === "/v1/messages/batches") return create(req.body);
    const c = /^\/v1\/messages\/batches\/([^/]+)\/cancel$/.exec(req.path);
    if (req.method === "POST" && c) return cancel(c[1]);
    const m = /^\/v1\/messages\/batches\/([^/]+)(\/results)?$/.exec(req.path);
    if (req.method !== "GET" || !m) return error(404, "not_found_error", "Not found");
    const batch = batches.get(m[1]);
    if (!batch) return error(404, "not_found_error", `batch ${m[1]} not found`);
    if (m[2]) {
      const text = results.get(m[1]);
      if (text === undefined) {
        return error(400, "invalid_request_error", "batch has not ended: no results yet");
      }
      return new Response(text, { headers: { "content-type": "application/x-jsonl" } });
    }
    if (!state.hold) end(m[1]);
    return Response.json(batch.object);
  });

  function create(body: unknown): Response {
    const requests = (body as Json)?.requests;
    if (!Array.isArray(requests) || requests.length === 0) {
      return error(400, "invalid_request_error", "requests: field required");
    }
    const parsed: FakeBatchRequest[] = [];
    for (const [i, r] of requests.entries()) {
      const params = (r as Json)?.params as Json | undefined;
      const messages = params?.messages as Json[] | undefined;
      const customId = (r as Json)?.custom_id;
      if (typeof customId !== "string" || !CUSTOM_ID.test(customId)) {
        return error(400, "invalid_request_error", `requests.${i}.custom_id: invalid`);
      }
      if (
        typeof params?.model !== "string" || typeof params.max_tokens !== "number" ||
        !Array.isArray(messages) || messages.length === 0
      ) {
        return error(
          400,
          "invalid_request_error",
          `requests.${i}.params: model, max_tokens and messages are required`,
        );
      }
      parsed.push({
        custom_id: customId,
        model: params.model,
        system: typeof params.system === "string" ? params.system : "",
        user: String(messages[0].content),
      });
    }
    const id = `msgbatch_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
    const now = new Date();
    const object: Json = {
      id,
      type: "message_batch",
      processing_status: "in_progress",
      request_counts: {
        processing: parsed.length,
        succeeded: 0,
        errored: 0,
        canceled: 0,
        expired: 0,
      },
      ended_at: null,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + 86_400_000).toISOString(),
      cancel_initiated_at: null,
      archived_at: null,
      results_url: null,
    };
    batches.set(id, { requests: parsed, object });
    return Response.json(object);
  }

  function cancel(id: string): Response {
    const batch = batches.get(id);
    if (!batch) return error(404, "not_found_error", `batch ${id} not found`);
    if (batch.object.processing_status === "ended") {
      return error(409, "invalid_request_error", `batch ${id} has already ended`);
    }
    Object.assign(batch.object, {
      processing_status: "canceling",
      cancel_initiated_at: new Date().toISOString(),
    });
    return Response.json(batch.object);
  }

  function end(id: string): void {
    const batch = batches.get(id)!;
    if (batch.object.processing_status === "ended") return;
    const canceling = batch.object.processing_status === "canceling";
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    const lines = batch.requests.map((r) => {
      // A batch canceled before it ran: none of its requests was processed.
      const a = canceling ? "canceled" : options.answer(r);
      let result: Json;
      if (a === "expired" || a === "canceled") {
        result = { type: a };
        counts[a]++;
      } else if ("error" in a) {
        result = {
          type: "errored",
          error: { type: "error", error: { type: "invalid_request_error", message: a.error } },
        };
        counts.errored++;
      } else {
        result = {
          type: "succeeded",
          message: {
            id: `msg_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`,
            type: "message",
            role: "assistant",
            model: r.model,
            content: [{ type: "text", text: a.text }],
            stop_reason: "end_turn",
            stop_sequence: null,
            usage: {
              input_tokens: a.inputTokens ?? 2000,
              cache_creation_input_tokens: 0,
              cache_read_input_tokens: 0,
              output_tokens: a.outputTokens ?? 400,
            },
          },
        };
        counts.succeeded++;
      }
      return JSON.stringify({ custom_id: r.custom_id, result }) + "\n";
    });
    results.set(id, lines.reverse().join("")); // results come in no particular order
    Object.assign(batch.object, {
      processing_status: "ended",
      request_counts: counts,
      ended_at: new Date().toISOString(),
      results_url: `${server.url}/v1/messages/batches/${id}/results`,
    });
  }

  return {
    url: server.url,
    requests: server.requests,
    batches,
    get hold() {
      return state.hold;
    },
    set hold(v: boolean) {
      state.hold = v;
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}
