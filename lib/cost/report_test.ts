import assert from "node:assert/strict";
import { addUsage, emptyCostReport, type UsageReport, wouldExceedBudget } from "./report.ts";
import { costRecords, parseCostRecords, parseDuration, summarizeCost } from "./records.ts";

const HAIKU: UsageReport = {
  microUsd: 1350,
  byModel: { "claude-haiku-4-5": { inputTokens: 1200, outputTokens: 30, microUsd: 1350 } },
  source: "reported",
};
const MIXED: UsageReport = {
  microUsd: 9000,
  byModel: {
    "claude-haiku-4-5": { inputTokens: 100, outputTokens: 10, microUsd: 1000 },
    "claude-sonnet-4-5": { inputTokens: 1000, outputTokens: 400, microUsd: 8000 },
  },
  source: "reported",
};

Deno.test("addUsage() adds to total, by_model and by_task without changing its input", () => {
  const r0 = emptyCostReport(1);
  const r1 = addUsage(r0, "t1", HAIKU);
  const r2 = addUsage(r1, "t1", MIXED);
  assert.deepEqual(r0, {
    total_micro_usd: 0,
    by_model: {},
    by_task: {},
    budget_micro_usd: 1_000_000,
  });
  assert.deepEqual(r2, {
    total_micro_usd: 10350,
    by_model: {
      "claude-haiku-4-5": { micro_usd: 2350, input_tokens: 1300, output_tokens: 40 },
      "claude-sonnet-4-5": { micro_usd: 8000, input_tokens: 1000, output_tokens: 400 },
    },
    by_task: { t1: { micro_usd: 10350, model: "claude-sonnet-4-5" } },
    budget_micro_usd: 1_000_000,
  });
});

const BUDGET: [string, number | null, number, number, boolean][] = [
  ["no budget never exceeds", null, 10 ** 12, 10 ** 12, false],
  ["under the cap", 1, 500_000, 400_000, false],
  ["reaching the cap exactly is allowed", 1, 500_000, 500_000, false],
  ["one micro-USD past the cap is refused", 1, 500_000, 500_001, true],
  ["already over the cap refuses even a free task", 1, 1_000_001, 0, true],
];
for (const [name, budget, spent, estimate, expected] of BUDGET) {
  Deno.test(`wouldExceedBudget(): ${name}`, () => {
    const report = { ...emptyCostReport(budget), total_micro_usd: spent };
    assert.equal(wouldExceedBudget(report, estimate), expected);
  });
}

Deno.test("summarizeCost() groups cost.jsonl records by model or task within --last", () => {
  const now = 1_763_719_200;
  const lines = [
    ...costRecords(MIXED, { ts: now - 3600, taskId: "t2", adapter: "claude" }),
    ...costRecords(HAIKU, { ts: now - 90_000, taskId: "t1" }),
    ...costRecords(HAIKU, { ts: now - 60, taskId: "t1" }),
  ].map((r) => JSON.stringify(r));
  const { records, badLines } = parseCostRecords(lines.join("\n") + '\n{"ts": 1, "micro');
  assert.deepEqual(badLines, [5]);
  const since = now - parseDuration("24h")!;
  assert.deepEqual(summarizeCost(records, { by: "model", since }), [
    {
      key: "claude-sonnet-4-5",
      micro_usd: 8000,
      input_tokens: 1000,
      output_tokens: 400,
      records: 1,
    },
    { key: "claude-haiku-4-5", micro_usd: 2350, input_tokens: 1300, output_tokens: 40, records: 2 },
  ]);
  assert.deepEqual(summarizeCost(records, { by: "task" }).map((r) => [r.key, r.micro_usd]), [
    ["t2", 9000],
    ["t1", 2700],
  ]);
});

Deno.test("parseDuration() reads s, m, h, d and rejects the rest", () => {
  assert.deepEqual(["90s", "30m", "24h", "7d", "24", "h", "-1h"].map(parseDuration), [
    90,
    1800,
    86400,
    604800,
    undefined,
    undefined,
    undefined,
  ]);
});
