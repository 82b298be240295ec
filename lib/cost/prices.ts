/**
 * A price table for CLIs that report tokens but no cost (Codex, Gemini, Qwen). Prices are list
 * prices in USD per million tokens as the providers published them (OpenAI's and Google's
 * pricing pages, read November 2026, standard tier, prompts under the long-context threshold);
 * they are estimates, and a CLI's own reported cost always wins over them. Cached input (prompt
 * cache reads) is billed at its own, lower price. Update the table when providers change
 * prices. Matching is by lower-cased substring, first match wins, so specific names come first.
 */

/** USD per million input, cached input and output tokens. */
export interface Price {
  inputPerMTok: number;
  /** Input tokens served from the provider's prompt cache. */
  cachedInputPerMTok: number;
  outputPerMTok: number;
}

function p(input: number, cached: number, output: number): Price {
  return { inputPerMTok: input, cachedInputPerMTok: cached, outputPerMTok: output };
}

/** `[substring of the model name, price]`, most specific first. */
const PRICE_TABLE: readonly (readonly [string, Price])[] = [
  // Anthropic (Claude Code reports its own cost; these serve Aider and Qwen-style estimates).
  // Opus 4, 4.1 and 3 kept their launch price; every Opus from 4.5 on lists at 5/25.
  ["opus-4-1", p(15, 1.5, 75)],
  ["opus-4-2025", p(15, 1.5, 75)],
  ["opus-4-0", p(15, 1.5, 75)],
  ["3-opus", p(15, 1.5, 75)],
  ["opus", p(5, 0.5, 25)],
  ["sonnet", p(3, 0.3, 15)],
  ["haiku", p(1, 0.1, 5)],
  // OpenAI: the models of Codex 0.169's catalogue (`codex debug models`) first.
  ["gpt-6-astra", p(10, 1, 50)],
  ["gpt-6.1-terra", p(1, 0.05, 5)],
  ["gpt-6.1-sol", p(2, 0.1, 10)],
  ["gpt-6-sol", p(2, 0.2, 10)],
  ["gpt-6-luna", p(0.1, 0.01, 0.5)],
  ["gpt-5.6-sol", p(4, 0.4, 20)],
  ["gpt-5.6-terra", p(2, 0.2, 12)],
  ["gpt-5.6-luna", p(0.2, 0.02, 1.2)],
  ["gpt-5.5-pro", p(30, 30, 180)],
  ["gpt-5.5", p(5, 0.5, 30)],
  ["gpt-5.4-nano", p(0.2, 0.02, 1.25)],
  ["gpt-5.4-mini", p(0.75, 0.075, 4.5)],
  ["gpt-5.4", p(2.5, 0.25, 15)],
  ["gpt-5-nano", p(0.05, 0.005, 0.4)],
  // Google: the models Gemini CLI 0.61 routes to (its `flash-lite`, `flash` and `pro` aliases).
  ["flash-lite", p(0.25, 0.025, 1.5)],
  ["gemini-3.5-flash", p(1.5, 0.15, 9)],
  ["gemini-3.8-flash", p(1.5, 0.15, 9)],
  ["gemini-3-flash", p(0.5, 0.05, 3)],
  ["gemini-2.5-flash", p(0.3, 0.03, 2.5)],
  ["flash", p(0.5, 0.05, 3)],
  ["gemini-3.1-pro", p(2, 0.2, 12)],
  ["gemini-3-pro", p(2, 0.2, 12)],
  ["gemini", p(1.25, 0.125, 10)],
  ["-mini", p(0.25, 0.025, 2)],
  ["gpt-5", p(1.25, 0.125, 10)],
  ["qwen", p(1, 0.1, 5)],
];

/** The price used when no entry matches: deliberately on the expensive side. */
const DEFAULT_PRICE: Price = p(3, 3, 15);

/** The price of `model` (default price when unknown). */
export function priceOf(model: string): Price {
  const m = model.toLowerCase();
  return PRICE_TABLE.find(([key]) => m.includes(key))?.[1] ?? DEFAULT_PRICE;
}

/** Token counts of one model's usage; `inputTokens` includes the cached ones. */
export interface TokenCounts {
  inputTokens: number;
  /** Part of `inputTokens` read from the prompt cache (default 0). */
  cachedInputTokens?: number;
  outputTokens: number;
}

/**
 * The batch APIs' price as a share of the standard one: Anthropic's Message Batches and OpenAI's
 * Batch API both bill every token of a batch request at 50 % (spec §8 "about 50%").
 */
export const BATCH_PRICE_FACTOR = 0.5;

/**
 * Estimated cost in integer micro-USD (USD/MTok equals micro-USD/token): uncached input at the
 * input price, cached input at the cached price, output (reasoning included) at the output price;
 * with `batch`, at the batch price ({@link BATCH_PRICE_FACTOR}).
 */
export function estimateMicroUsd(
  model: string,
  tokens: TokenCounts,
  options: { batch?: boolean } = {},
): number {
  const price = priceOf(model);
  const cached = Math.min(tokens.cachedInputTokens ?? 0, tokens.inputTokens);
  const factor = options.batch ? BATCH_PRICE_FACTOR : 1;
  return Math.round(
    factor * ((tokens.inputTokens - cached) * price.inputPerMTok +
      cached * price.cachedInputPerMTok + tokens.outputTokens * price.outputPerMTok),
  );
}

/** Dollars (a float from a CLI) to integer micro-USD. */
export function usdToMicro(usd: number): number {
  return Math.round(usd * 1_000_000);
}
