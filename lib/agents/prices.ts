/**
 * A small price table for CLIs that report tokens but no cost (Codex, Gemini, Qwen). Prices are
 * list prices in USD per million tokens as published by the providers when this table was
 * written; they are estimates, and a CLI's own reported cost always wins over them. Update the
 * table when providers change prices. Matching is by lower-cased substring, first match wins.
 */

/** USD per million input and output tokens. */
export interface Price {
  inputPerMTok: number;
  outputPerMTok: number;
}

/** `[substring of the model name, price]`, most specific first. */
export const PRICE_TABLE: readonly (readonly [string, Price])[] = [
  ["opus-4-5", { inputPerMTok: 5, outputPerMTok: 25 }],
  ["opus", { inputPerMTok: 15, outputPerMTok: 75 }],
  ["sonnet", { inputPerMTok: 3, outputPerMTok: 15 }],
  ["haiku", { inputPerMTok: 1, outputPerMTok: 5 }],
  ["flash-lite", { inputPerMTok: 0.1, outputPerMTok: 0.4 }],
  ["flash", { inputPerMTok: 0.3, outputPerMTok: 2.5 }],
  ["gemini", { inputPerMTok: 1.25, outputPerMTok: 10 }],
  ["gpt-5-nano", { inputPerMTok: 0.05, outputPerMTok: 0.4 }],
  ["-mini", { inputPerMTok: 0.25, outputPerMTok: 2 }],
  ["gpt-5", { inputPerMTok: 1.25, outputPerMTok: 10 }],
  ["qwen", { inputPerMTok: 1, outputPerMTok: 5 }],
];

/** The price used when no entry matches: deliberately on the expensive side. */
export const DEFAULT_PRICE: Price = { inputPerMTok: 3, outputPerMTok: 15 };

/** The price of `model` (default price when unknown). */
export function priceOf(model: string): Price {
  const m = model.toLowerCase();
  return PRICE_TABLE.find(([key]) => m.includes(key))?.[1] ?? DEFAULT_PRICE;
}

/** Estimated cost of a number of tokens in integer micro-USD (USD/MTok equals micro-USD/token). */
export function estimateMicroUsd(model: string, inputTokens: number, outputTokens: number): number {
  const p = priceOf(model);
  return Math.round(inputTokens * p.inputPerMTok + outputTokens * p.outputPerMTok);
}

/** Dollars (a float from a CLI) to integer micro-USD. */
export function usdToMicro(usd: number): number {
  return Math.round(usd * 1_000_000);
}
