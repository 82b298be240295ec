/**
 * OpenAI's Batch API, as documented: the requests are uploaded as a JSONL file (`POST /v1/files`,
 * multipart, `purpose=batch`; one `{"custom_id", "method": "POST", "url": "/v1/responses",
 * "body"}` per line), `POST /v1/batches` with `{"input_file_id", "endpoint": "/v1/responses",
 * "completion_window": "24h"}` answers a batch (`{"id": "batch_…", "object": "batch", "status":
 * "validating" | "failed" | "in_progress" | "finalizing" | "completed" | "expired" |
 * "cancelling" | "cancelled", "output_file_id", "error_file_id", "errors", "request_counts":
 * {total, completed, failed}}`), `GET /v1/batches/<id>` reads it again, and `GET
 * /v1/files/<id>/content` serves the output and error files: one `{"custom_id", "response":
 * {"status_code", "body"}, "error"}` per request (an expired request's error code is
 * `batch_expired`). `POST /v1/batches/<id>/cancel` cancels it (`cancelling`, then `cancelled`
 * with the output of the requests that ran; the rest have no line).
 */
import type { TokenCounts } from "../cost/prices.ts";
import { batchClient, cutResults, jsonLines, refusedUndone } from "./_http.ts";
import { resultsMaxBytes } from "./limits.ts";
import type { BatchEndpoint } from "./provider.ts";
import type { BatchApi, BatchItem, BatchRequestSpec } from "./types.ts";

type Json = Record<string, unknown>;
const obj = (
  v: unknown,
): Json => (v && typeof v === "object" && !Array.isArray(v) ? v as Json : {});
const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The endpoint each request calls. */
const OPENAI_BATCH_ENDPOINT = "/v1/responses";

/** The states after which a batch processes nothing more. */
const ENDED = new Set(["completed", "failed", "expired", "cancelled"]);

/** The input file's lines for `requests`. */
function openaiBatchInput(requests: readonly BatchRequestSpec[]): string {
  return requests.map((r) =>
    JSON.stringify({
      custom_id: r.customId,
      method: "POST",
      url: OPENAI_BATCH_ENDPOINT,
      body: {
        model: r.model,
        instructions: r.system,
        input: r.user,
        max_output_tokens: r.maxTokens,
      },
    }) + "\n"
  ).join("");
}

/** Responses API usage as token counts (`input_tokens` includes the cached ones). */
function openaiTokens(usage: unknown): TokenCounts {
  const u = obj(usage);
  return {
    inputTokens: num(u.input_tokens),
    cachedInputTokens: num(obj(u.input_tokens_details).cached_tokens),
    outputTokens: num(u.output_tokens),
  };
}

/** The text of a Responses API response: its messages' `output_text` parts. */
function outputText(body: Json): string {
  const output = Array.isArray(body.output) ? body.output.map(obj) : [];
  return output.filter((o) => o.type === "message").flatMap((o) =>
    (Array.isArray(o.content) ? o.content : []).map(obj).filter((c) => c.type === "output_text")
      .map((c) => String(c.text))
  ).join("\n");
}

/** One line of an output or error file as a {@link BatchItem}. */
function openaiResult(line: Json): BatchItem | undefined {
  if (typeof line.custom_id !== "string") return undefined;
  const customId = line.custom_id;
  const error = obj(line.error);
  if (line.error) {
    const outcome = error.code === "batch_expired"
      ? "expired"
      : error.code === "batch_cancelled"
      ? "canceled"
      : "errored";
    return { customId, outcome, error: `${error.code ?? "error"}: ${error.message ?? ""}` };
  }
  const response = obj(line.response);
  const body = obj(response.body);
  if (response.status_code !== 200) {
    const e = obj(body.error);
    return {
      customId,
      outcome: "errored",
      error: `HTTP ${response.status_code}: ${e.message ?? "no message"}`,
    };
  }
  return {
    customId,
    outcome: "succeeded",
    text: outputText(body),
    model: typeof body.model === "string" ? body.model : undefined,
    usage: openaiTokens(body.usage),
  };
}

/** The Batch API at `endpoint`. */
export function openaiBatches(endpoint: BatchEndpoint): BatchApi {
  const base = endpoint.baseUrl;
  const batchUrl = (id: string) => `${base}/batches/${encodeURIComponent(id)}`;
  const http = batchClient(endpoint);
  const file = (id: string, maxBytes: number) =>
    http.request(`${base}/files/${encodeURIComponent(id)}/content`, { maxBytes });
  return {
    async submit(requests) {
      const form = new FormData();
      form.append("purpose", "batch");
      form.append(
        "file",
        new Blob([openaiBatchInput(requests)], { type: "application/jsonl" }),
        "batch_input.jsonl",
      );
      const file = obj(
        (await http.request(`${base}/files`, {
          method: "POST",
          body: form,
          resendWhen: refusedUndone,
        })).json(),
      );
      if (typeof file.id !== "string") {
        throw new Error("openai file upload: the answer names no file id");
      }
      const batch = obj(
        (await http.request(`${base}/batches`, {
          method: "POST",
          resendWhen: refusedUndone,
          json: {
            input_file_id: file.id,
            endpoint: OPENAI_BATCH_ENDPOINT,
            completion_window: "24h",
          },
        })).json(),
      );
      if (typeof batch.id !== "string") {
        throw new Error("openai batch submission: the answer names no batch id");
      }
      return batch.id;
    },
    async state(batchId) {
      const batch = obj((await http.request(batchUrl(batchId))).json());
      const status = String(batch.status ?? "unknown");
      const counts = Object.fromEntries(
        Object.entries(obj(batch.request_counts)).map(([k, v]) => [k, num(v)]),
      );
      return { ended: ENDED.has(status), status, counts };
    },
    async cancel(batchId) {
      await http.request(`${batchUrl(batchId)}/cancel`, { method: "POST" });
    },
    async results(batchId, customIds) {
      const batch = obj((await http.request(batchUrl(batchId))).json());
      const items = new Map<string, BatchItem>();
      const maxBytes = resultsMaxBytes(customIds.length);
      let cut = false;
      for (const key of ["output_file_id", "error_file_id"]) {
        const id = batch[key];
        if (typeof id !== "string" || id === "") continue;
        const read = await file(id, maxBytes);
        cut ||= read.truncated;
        for (const line of jsonLines(read.text())) {
          const item = openaiResult(line);
          if (item) items.set(item.customId, item);
        }
      }
      // A batch that failed validation, expired or was cancelled leaves requests without a line.
      const errors = Array.isArray(obj(batch.errors).data)
        ? obj(batch.errors).data as unknown[]
        : [];
      const why = errors.map((e) => String(obj(e).message ?? "")).filter(Boolean).join("; ");
      const missing = (c: string): BatchItem =>
        batch.status === "expired"
          ? { customId: c, outcome: "expired" }
          : batch.status === "cancelled"
          ? { customId: c, outcome: "canceled" }
          : {
            customId: c,
            outcome: "errored",
            error: batch.status === "failed"
              ? `the batch failed: ${why || "no reason given"}`
              : cut
              ? cutResults(maxBytes)
              : "the results name no result for it",
          };
      return customIds.map((c) => items.get(c) ?? missing(c));
    },
  };
}
