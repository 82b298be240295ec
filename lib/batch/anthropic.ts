/**
 * Anthropic's Message Batches API, as documented: `POST /v1/messages/batches` with
 * `{"requests": [{"custom_id", "params": <a Messages API request>}]}` answers a Message Batch
 * (`{"id": "msgbatch_…", "type": "message_batch", "processing_status": "in_progress" | "canceling"
 * | "ended", "request_counts": {processing, succeeded, errored, canceled, expired},
 * "results_url"}`); `GET /v1/messages/batches/<id>` reads it again; once ended, `results_url`
 * serves JSONL, one `{"custom_id", "result": {"type": "succeeded", "message"} | {"type":
 * "errored", "error": {"type": "error", "error": {type, message}}} | {"type": "canceled"} |
 * {"type": "expired"}}` per request, in any order. `POST /v1/messages/batches/<id>/cancel`
 * cancels it (`canceling`, then `ended`; the requests not yet processed are `canceled`).
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

/** The body of `POST /v1/messages/batches` for `requests`. */
function anthropicBatchBody(requests: readonly BatchRequestSpec[]): Json {
  return {
    requests: requests.map((r) => ({
      custom_id: r.customId,
      params: {
        model: r.model,
        max_tokens: r.maxTokens,
        system: r.system,
        messages: [{ role: "user", content: r.user }],
      },
    })),
  };
}

/** Messages API usage as token counts (input includes cache writes and reads, as billed). */
function anthropicTokens(usage: unknown): TokenCounts {
  const u = obj(usage);
  const cached = num(u.cache_read_input_tokens);
  return {
    inputTokens: num(u.input_tokens) + num(u.cache_creation_input_tokens) + cached,
    cachedInputTokens: cached,
    outputTokens: num(u.output_tokens),
  };
}

/** One line of a results file as a {@link BatchItem}. */
function anthropicResult(line: Json): BatchItem | undefined {
  if (typeof line.custom_id !== "string") return undefined;
  const result = obj(line.result);
  const customId = line.custom_id;
  switch (result.type) {
    case "succeeded": {
      const message = obj(result.message);
      const content = Array.isArray(message.content) ? message.content : [];
      const text = content.map(obj).filter((b) => b.type === "text").map((b) => String(b.text))
        .join("\n");
      return {
        customId,
        outcome: "succeeded",
        text,
        model: typeof message.model === "string" ? message.model : undefined,
        usage: anthropicTokens(message.usage),
      };
    }
    case "errored": {
      const e = obj(obj(result.error).error);
      const error = `${e.type ?? "error"}: ${e.message ?? "no message"}`;
      return { customId, outcome: "errored", error };
    }
    case "expired":
    case "canceled":
      return { customId, outcome: result.type };
    default:
      return { customId, outcome: "errored", error: `unknown result type ${String(result.type)}` };
  }
}

/** The Message Batches API at `endpoint`. */
export function anthropicBatches(endpoint: BatchEndpoint): BatchApi {
  const batches = `${endpoint.baseUrl}/v1/messages/batches`;
  const http = batchClient(endpoint);
  return {
    async submit(requests) {
      const res = await http.request(batches, {
        method: "POST",
        json: anthropicBatchBody(requests),
        resendWhen: refusedUndone,
      });
      const batch = obj(res.json());
      if (typeof batch.id !== "string") {
        throw new Error("anthropic batch submission: the answer names no batch id");
      }
      return batch.id;
    },
    async state(batchId) {
      const res = await http.request(`${batches}/${encodeURIComponent(batchId)}`);
      const batch = obj(res.json());
      const counts = Object.fromEntries(
        Object.entries(obj(batch.request_counts)).map(([k, v]) => [k, num(v)]),
      );
      const status = String(batch.processing_status ?? "unknown");
      return { ended: status === "ended", status, counts };
    },
    async cancel(batchId) {
      await http.request(`${batches}/${encodeURIComponent(batchId)}/cancel`, { method: "POST" });
    },
    async results(batchId, customIds) {
      const id = encodeURIComponent(batchId);
      // The documented path; a `results_url` elsewhere than the endpoint never gets its key.
      const state = obj((await http.request(`${batches}/${id}`)).json());
      const own = `${batches}/${id}/results`;
      const url = typeof state.results_url === "string" &&
          sameOrigin(state.results_url, endpoint.baseUrl)
        ? state.results_url
        : own;
      const maxBytes = resultsMaxBytes(customIds.length);
      const file = await http.request(url, { maxBytes });
      const items = new Map<string, BatchItem>();
      for (const line of jsonLines(file.text())) {
        const item = anthropicResult(line);
        if (item) items.set(item.customId, item);
      }
      return customIds.map((c) =>
        items.get(c) ??
          {
            customId: c,
            outcome: "errored",
            error: file.truncated ? cutResults(maxBytes) : "the results name no result for it",
          }
      );
    },
  };
}

function sameOrigin(url: string, base: string): boolean {
  try {
    return new URL(url).origin === new URL(base).origin;
  } catch {
    return false;
  }
}
