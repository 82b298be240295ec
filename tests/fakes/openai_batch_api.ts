/**
 * A local stand-in for OpenAI's Batch API, speaking its documented wire format: `POST /v1/files`
 * (multipart, `purpose=batch`, a JSONL `file` of `{"custom_id", "method", "url", "body"}` lines)
 * answers a File object; `POST /v1/batches` (`{"input_file_id", "endpoint", "completion_window":
 * "24h"}`) answers a Batch object — `id` (`batch_…`), `object: "batch"`, `status` (`validating`,
 * `in_progress`, then `finalizing` and `completed`, or `expired`; `failed` when `invalid` makes
 * its validation fail, with the reason in `errors.data`), `request_counts` (`total`,
 * `completed`, `failed`), `output_file_id`, `error_file_id` (set once it completed), `errors`
 * and the `*_at` times; `GET /v1/batches/<id>` reads it (each look while `hold` is off moves it
 * a state on; `POST /v1/batches/<id>/cancel` makes it `cancelling`, then `cancelled`); `GET
 * /v1/files/<id>/content` serves the output file (`{"id", "custom_id", "response":
 * {"status_code": 200, "request_id", "body": <a Responses API response>}, "error": null}`) and
 * the error file (a 400 `response` for an errored request, `{"error": {"code": "batch_expired"}}`
 * for one the window expired on). Bearer auth; errors are `{"error": {message, type, param,
 * code}}`. Each request is answered by `answer`. Every call is recorded.
 */
import { type FakeServer, startRecordingServer } from "./_sse_server.ts";
import type { FakeBatchAnswer, FakeBatchRequest } from "./anthropic_batches_api.ts";

export type { FakeBatchAnswer, FakeBatchRequest } from "./anthropic_batches_api.ts";

/** A running fake; dispose it to stop the server. */
export interface FakeOpenAiBatches extends FakeServer {
  /** While true, batches stay where they are however often they are read. */
  hold: boolean;
  batches: Map<string, { requests: FakeBatchRequest[]; object: Record<string, unknown> }>;
  /** Uploaded and produced files, by id. */
  files: Map<string, { purpose: string; text: string }>;
}

type Json = Record<string, unknown>;

const error = (status: number, message: string, type = "invalid_request_error") =>
  Response.json({ error: { message, type, param: null, code: null } }, { status });

const rid = (prefix: string) => `${prefix}${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;
const nowS = () => Math.floor(Date.now() / 1000);

/** Start the fake on 127.0.0.1, port 0. */
export function startFakeOpenAiBatches(
  options: {
    answer: (request: FakeBatchRequest) => FakeBatchAnswer;
    /** Batches fail validation with this message (as a malformed input file makes them). */
    invalid?: string;
  },
): FakeOpenAiBatches {
  const batches: FakeOpenAiBatches["batches"] = new Map();
  const files: FakeOpenAiBatches["files"] = new Map();
  /** What a finalizing batch becomes at the next look. */
  const finishing = new Map<string, Record<string, unknown>>();
  const state = { hold: false };
  const server = startRecordingServer(async (req) => {
    if (!/^Bearer \S+/.test(req.headers.authorization ?? "")) {
      return error(401, "You didn't provide an API key.", "invalid_request_error");
    }
    if (req.method === "POST" && req.path === "/v1/files") return await upload(req);
    if (req.method === "POST" && req.path === "/v1/batches") return create(req.body as Json);
    const b = /^\/v1\/batches\/([^/]+)$/.exec(req.path);
    if (req.method === "GET" && b) {
      const batch = batches.get(b[1]);
      if (!batch) return error(404, `No batch found with id '${b[1]}'.`);
      if (!state.hold) step(b[1]);
      return Response.json(batch.object);
    }
    const c = /^\/v1\/batches\/([^/]+)\/cancel$/.exec(req.path);
    if (req.method === "POST" && c) {
      const batch = batches.get(c[1]);
      if (!batch) return error(404, `No batch found with id '${c[1]}'.`);
      if (!["validating", "in_progress", "finalizing"].includes(String(batch.object.status))) {
        return error(409, `Cannot cancel a batch with status '${batch.object.status}'.`);
      }
      Object.assign(batch.object, { status: "cancelling", cancelling_at: nowS() });
      return Response.json(batch.object);
    }
    const f = /^\/v1\/files\/([^/]+)\/content$/.exec(req.path);
    if (req.method === "GET" && f) {
      const file = files.get(f[1]);
      if (!file) return error(404, `No such File object: ${f[1]}`);
      return new Response(file.text, { headers: { "content-type": "application/octet-stream" } });
    }
    return error(404, `Invalid URL (${req.method} ${req.path})`);
  });

  async function upload(req: { headers: Record<string, string>; body: unknown }) {
    const form = await new Response(String(req.body ?? ""), {
      headers: { "content-type": req.headers["content-type"] ?? "" },
    }).formData().catch(() => undefined);
    const file = form?.get("file");
    if (!form || !(file instanceof File)) return error(400, "'file' is a required property");
    if (form.get("purpose") !== "batch") return error(400, "'purpose' must be 'batch' here");
    const text = await file.text();
    const id = rid("file-");
    files.set(id, { purpose: "batch", text });
    return Response.json({
      id,
      object: "file",
      bytes: new TextEncoder().encode(text).length,
      created_at: nowS(),
      filename: file.name,
      purpose: "batch",
      status: "processed",
      expires_at: null,
      status_details: null,
    });
  }

  function create(body: Json): Response {
    const input = files.get(String(body?.input_file_id));
    if (!input) return error(400, `Invalid 'input_file_id': '${body?.input_file_id}'.`);
    if (body.endpoint !== "/v1/responses" && body.endpoint !== "/v1/chat/completions") {
      return error(400, `Invalid 'endpoint': '${body.endpoint}'.`);
    }
    if (body.completion_window !== "24h") return error(400, "completion_window must be '24h'");
    const requests: FakeBatchRequest[] = [];
    for (const line of input.text.split("\n").filter((l) => l.trim() !== "")) {
      const r = JSON.parse(line) as Json;
      const b = r.body as Json;
      if (r.method !== "POST" || r.url !== body.endpoint || typeof b?.model !== "string") {
        return error(400, "each line needs method POST, the batch's url and a body with a model");
      }
      requests.push({
        custom_id: String(r.custom_id),
        model: b.model,
        system: String(b.instructions ?? ""),
        user: String(b.input ?? ""),
      });
    }
    const id = rid("batch_");
    const object: Json = {
      id,
      object: "batch",
      endpoint: body.endpoint,
      errors: null,
      input_file_id: body.input_file_id,
      completion_window: "24h",
      status: "validating",
      output_file_id: null,
      error_file_id: null,
      created_at: nowS(),
      in_progress_at: null,
      expires_at: nowS() + 86_400,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: requests.length, completed: 0, failed: 0 },
      metadata: null,
    };
    batches.set(id, { requests, object });
    return Response.json(object);
  }

  function step(id: string): void {
    const batch = batches.get(id)!;
    const o = batch.object;
    if (o.status === "validating" && options.invalid !== undefined) {
      Object.assign(o, {
        status: "failed",
        failed_at: nowS(),
        errors: {
          object: "list",
          data: [{ code: "invalid_request", message: options.invalid, param: null, line: 1 }],
        },
      });
      return;
    }
    if (o.status === "validating") {
      Object.assign(o, { status: "in_progress", in_progress_at: nowS() });
      return;
    }
    if (o.status === "cancelling") {
      // Cancelled before any request ran: no output file, no line for any request.
      Object.assign(o, { status: "cancelled", cancelled_at: nowS() });
      return;
    }
    if (o.status === "finalizing") {
      Object.assign(o, finishing.get(id));
      return;
    }
    if (o.status !== "in_progress") return;
    const out: string[] = [];
    const errs: string[] = [];
    let expired = false;
    let completed = 0;
    for (const r of batch.requests) {
      const a = options.answer(r);
      if (a === "expired" || a === "canceled") {
        expired = true;
        errs.push(JSON.stringify({
          id: rid("batch_req_"),
          custom_id: r.custom_id,
          response: null,
          error: {
            code: "batch_expired",
            message: "This request could not be executed before the completion window expired.",
          },
        }));
      } else if ("error" in a) {
        errs.push(JSON.stringify({
          id: rid("batch_req_"),
          custom_id: r.custom_id,
          response: {
            status_code: 400,
            request_id: rid("req_"),
            body: {
              error: { message: a.error, type: "invalid_request_error", param: null, code: null },
            },
          },
          error: null,
        }));
      } else {
        completed++;
        const input = a.inputTokens ?? 2000;
        const output = a.outputTokens ?? 400;
        out.push(JSON.stringify({
          id: rid("batch_req_"),
          custom_id: r.custom_id,
          response: {
            status_code: 200,
            request_id: rid("req_"),
            body: {
              id: rid("resp_"),
              object: "response",
              created_at: nowS(),
              status: "completed",
              model: r.model,
              output: [{
                type: "message",
                id: rid("msg_"),
                status: "completed",
                role: "assistant",
                content: [{ type: "output_text", text: a.text, annotations: [] }],
              }],
              usage: {
                input_tokens: input,
                input_tokens_details: { cached_tokens: 0 },
                output_tokens: output,
                output_tokens_details: { reasoning_tokens: 0 },
                total_tokens: input + output,
              },
            },
          },
          error: null,
        }));
      }
    }
    const file = (lines: string[]) => {
      if (lines.length === 0) return null;
      const fid = rid("file-");
      files.set(fid, { purpose: "batch_output", text: lines.reverse().join("\n") + "\n" });
      return fid;
    };
    const ended = {
      status: expired ? "expired" : "completed",
      ...(expired ? { expired_at: nowS() } : { completed_at: nowS() }),
      output_file_id: file(out),
      error_file_id: file(errs),
      request_counts: {
        total: batch.requests.length,
        completed,
        failed: batch.requests.length - completed,
      },
    };
    if (expired) return void Object.assign(o, ended);
    // A batch that ran to its end is `finalizing` (its files being written) for a look first.
    finishing.set(id, ended);
    Object.assign(o, { status: "finalizing", finalizing_at: nowS() });
  }

  return {
    url: server.url,
    requests: server.requests,
    batches,
    files,
    get hold() {
      return state.hold;
    },
    set hold(v: boolean) {
      state.hold = v;
    },
    [Symbol.asyncDispose]: () => server[Symbol.asyncDispose](),
  };
}
