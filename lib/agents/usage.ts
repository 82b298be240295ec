/**
 * The usage reader: what a session spent, from the usage its adapter read in the log (and in the
 * CLI's own record of the session, when it keeps one), priced. Pure. A cost the CLI printed is
 * taken as reported; tokens without a cost are priced by lib/cost/prices.ts (estimated).
 */
import { estimateMicroUsd, type TokenCounts, usdToMicro } from "../cost/prices.ts";
import type { ModelUsage, UsageReport } from "../cost/report.ts";
import type { SessionEvent, UsageEvent } from "./session_events.ts";

/** A `ModelUsage`, with `cachedInputTokens` only when some input was cached. */
function modelUsage(tokens: TokenCounts, microUsd: number): ModelUsage {
  const usage: ModelUsage = {
    inputTokens: tokens.inputTokens,
    outputTokens: tokens.outputTokens,
    microUsd,
  };
  if (tokens.cachedInputTokens) usage.cachedInputTokens = tokens.cachedInputTokens;
  return usage;
}

const hasTokens = (t: TokenCounts) => t.inputTokens + t.outputTokens > 0;

/**
 * The report of one usage event. Reported: each model at the cost the CLI printed for it (the
 * total when it printed one figure). Estimated: each model priced from its tokens; models without
 * tokens are left out unless none has any (then they are kept, at 0, naming the model).
 */
function pricedUsage(usage: UsageEvent): UsageReport {
  const entries = Object.entries(usage.models);
  if (usage.costUsd !== undefined) {
    const total = usage.costUsd;
    return {
      microUsd: usdToMicro(total),
      byModel: Object.fromEntries(entries.map(([model, t]) => [model, {
        inputTokens: t.inputTokens,
        outputTokens: t.outputTokens,
        microUsd: usdToMicro(t.costUsd ?? total),
      }])),
      source: "reported",
    };
  }
  const used = entries.some(([, t]) => hasTokens(t))
    ? entries.filter(([, t]) => hasTokens(t))
    : entries;
  const byModel: Record<string, ModelUsage> = {};
  let microUsd = 0;
  for (const [model, tokens] of used) {
    const cost = estimateMicroUsd(model, tokens);
    byModel[model] = modelUsage(tokens, cost);
    microUsd += cost;
  }
  return { microUsd, byModel, source: "estimated" };
}

/**
 * What the session spent: the usage of the CLI's own record when it is given and names tokens,
 * else the log's last usage event; undefined when neither states any.
 */
export function usageOf(
  events: readonly SessionEvent[],
  record?: UsageEvent,
): UsageReport | undefined {
  if (record && Object.values(record.models).some(hasTokens)) return pricedUsage(record);
  const usage = events.findLast((e): e is UsageEvent => e.kind === "usage");
  return usage ? pricedUsage(usage) : undefined;
}
