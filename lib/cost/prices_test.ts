import assert from "node:assert/strict";
import { priceOf } from "./prices.ts";

Deno.test("priceOf() gives each Claude model its list price: Opus 4.5 and later at 5/25, the older Opus models at 15/75", () => {
  const cases: [string, number, number][] = [
    ["claude-opus-4-8", 5, 25],
    ["claude-opus-4-5-20251101", 5, 25],
    ["opus", 5, 25],
    ["claude-opus-4-1-20250805", 15, 75],
    ["claude-opus-4-20250514", 15, 75],
    ["claude-opus-4-0", 15, 75],
    ["claude-3-opus-20240229", 15, 75],
    ["claude-sonnet-5", 3, 15],
    ["claude-haiku-4-5", 1, 5],
  ];
  for (const [model, input, output] of cases) {
    const price = priceOf(model);
    assert.deepEqual([price.inputPerMTok, price.outputPerMTok], [input, output], model);
  }
});
