/**
 * The words of a batch request's session log (`.sdd/runtime/<session>.log`): where the request
 * went and what it asked, then what came of it — the provider's error, or the model's answer
 * (its beginning only, when it is longer than the lane reads: see ./limits.ts).
 */
import type { BatchItem, BatchRequestSpec } from "./api.ts";
import type { BatchEntry } from "./ledger.ts";
import { ANSWER_LOG_CHARS, ANSWER_MAX_CHARS } from "./limits.ts";

/** The head of a request's log: where it went and what it asked. */
export function requestLog(entry: BatchEntry, request: BatchRequestSpec): string {
  const batch = entry.batch_id ? `batch ${entry.batch_id}, ` : "";
  return `batch request ${entry.custom_id} to the ${entry.provider} batch API (${batch}model ` +
    `${entry.model}, files at ${entry.base.slice(0, 12)})\n\n--- system ---\n` +
    `${request.system}\n\n--- user ---\n${request.user}\n`;
}

/** What came of a request, for its log; `requested` names the model when the answer does not. */
export function outcomeLog(item: BatchItem, requested: string): string {
  if (item.outcome !== "succeeded") return `\n--- ${item.outcome} ---\n${item.error ?? ""}\n`;
  const text = item.text ?? "";
  const head = `\n--- answer (${item.model ?? requested}) ---\n`;
  if (text.length <= ANSWER_MAX_CHARS) return `${head}${text}\n`;
  return `${head}${text.slice(0, ANSWER_LOG_CHARS)}\n--- ` +
    `${text.length - ANSWER_LOG_CHARS} more characters left out ---\n`;
}
