/** The batch API of a provider's endpoint (./anthropic.ts or ./openai.ts). */
import { anthropicBatches } from "./anthropic.ts";
import { openaiBatches } from "./openai.ts";
import type { BatchEndpoint } from "./provider.ts";
import type { BatchApi } from "./types.ts";

export type { BatchApi, BatchItem, BatchRequestSpec, BatchState } from "./types.ts";

/** The batch API of `endpoint`'s provider. */
export function batchApi(endpoint: BatchEndpoint): BatchApi {
  return endpoint.provider === "anthropic" ? anthropicBatches(endpoint) : openaiBatches(endpoint);
}
