import assert from "node:assert/strict";
import { formatUsd } from "./money.ts";

Deno.test("formatUsd() renders dollars with 4 decimals, rounding half up", () => {
  assert.equal(formatUsd(0), "$0.0000");
  assert.equal(formatUsd(49), "$0.0000");
  assert.equal(formatUsd(50), "$0.0001");
  assert.equal(formatUsd(1_234_560), "$1.2346");
  assert.equal(formatUsd(12_000_000), "$12.0000");
  assert.equal(formatUsd(-1_500), "-$0.0015");
});
