import assert from "node:assert/strict";
import { adaptiveTimeoutS, agentTimeoutS, baseTimeoutS, percentile } from "./timeouts.ts";

const BASE: [string, { scope?: string; role?: string }, number][] = [
  ["small scope is 15 min", { scope: "small", role: "dev" }, 900],
  ["medium scope is 30 min", { scope: "medium" }, 1800],
  ["large scope is 60 min", { scope: "large" }, 3600],
  ["architect is XL 120 min", { role: "architect" }, 7200],
  ["security is XL even when small", { scope: "small", role: "security" }, 7200],
  ["manager is XL", { role: "manager", scope: "large" }, 7200],
  ["no scope is the 1800 s default", {}, 1800],
  ["an unknown scope is the default", { scope: "huge" }, 1800],
];
for (const [name, key, expected] of BASE) {
  Deno.test(`baseTimeoutS(): ${name}`, () => assert.equal(baseTimeoutS(key), expected));
}

const ADAPT: [string, number, number[], number][] = [
  ["keeps the base with fewer than 5 samples", 900, [100, 100, 100, 100], 900],
  ["uses p90 × 1.5 inside the clamp", 900, [400, 500, 600, 700, 800], 1200],
  ["clamps to half the base for fast tasks", 900, [10, 10, 10, 10, 10], 450],
  ["clamps to twice the base for slow tasks", 900, [5000, 5000, 5000, 5000, 5000], 1800],
  ["ignores non-positive and NaN samples", 900, [400, 500, 600, 700, 0, -1, NaN], 900],
];
for (const [name, base, durations, expected] of ADAPT) {
  Deno.test(`adaptiveTimeoutS(): ${name}`, () =>
    assert.equal(adaptiveTimeoutS(base, durations), expected));
}

Deno.test("percentile() is nearest-rank", () => {
  assert.equal(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.9), 9);
  assert.equal(percentile([5], 0.9), 5);
});

Deno.test("agentTimeoutS() adapts from tasks.jsonl records of the same role and scope only", () => {
  const lines = [
    ...[600, 700, 800, 900, 1000].map((d) =>
      JSON.stringify({ role: "dev", scope: "small", duration_s: d })
    ),
    JSON.stringify({ role: "qa", scope: "small", duration_s: 5 }),
    JSON.stringify({ role: "dev", scope: "large", duration_s: 5 }),
    '{"role":"dev","scope":"small","dur',
  ].join("\n");
  assert.equal(agentTimeoutS({ role: "dev", scope: "small" }, lines), 1500);
  assert.equal(agentTimeoutS({ role: "qa", scope: "small" }, lines), 900);
});
