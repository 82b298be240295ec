/**
 * What the batch lane asks of a provider's batch API, whichever it is: submit requests as one
 * batch, read the batch's state, read its results, cancel it (./anthropic.ts and ./openai.ts speak the
 * providers' wire formats).
 */
import type { TokenCounts } from "../cost/prices.ts";

/** One request of a batch: a task's closed-form prompt. */
export interface BatchRequestSpec {
  /** `^[A-Za-z0-9_-]{1,64}$` (both providers accept it): the session id of the task's try. */
  customId: string;
  model: string;
  system: string;
  user: string;
  maxTokens: number;
}

/** A batch's state at the provider. */
export interface BatchState {
  /** No request is processing any more: the results can be read. */
  ended: boolean;
  /** The provider's own word (`in_progress`, `ended`, `validating`, `finalizing` …). */
  status: string;
  /** The provider's counts of requests by state. */
  counts: Record<string, number>;
}

/** How one request of an ended batch came out. */
export interface BatchItem {
  customId: string;
  outcome: "succeeded" | "errored" | "expired" | "canceled";
  /** The answer's text (succeeded). */
  text?: string;
  /** The model that answered and the tokens it was billed (succeeded). */
  model?: string;
  usage?: TokenCounts;
  /** What went wrong (errored). */
  error?: string;
}

/** A provider's batch API. */
export interface BatchApi {
  /** Submit `requests` as one batch; its id. */
  submit(requests: readonly BatchRequestSpec[]): Promise<string>;
  state(batchId: string): Promise<BatchState>;
  /** The results of an ended batch, one per request (a request with none is `errored`). */
  results(batchId: string, customIds: readonly string[]): Promise<BatchItem[]>;
  /**
   * Ask the provider to cancel the batch: requests not yet processed end `canceled` and are not
   * billed; the batch ends soon after (its results are read as any batch's).
   */
  cancel(batchId: string): Promise<void>;
}
