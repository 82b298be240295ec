/** The batch lane's spend (DESIGN.md §15): half price, flagged per task, and what it saved. */
import assert from "node:assert/strict";
import { BATCH_PRICE_FACTOR, estimateMicroUsd } from "./prices.ts";
import { batchSavings, costRecords } from "./records.ts";
import { addUsage, emptyCostReport, type UsageReport } from "./report.ts";
import { reportFromRecords } from "./spend.ts";
import { SpendTracker } from "./budget.ts";
import type { WorkspacePaths } from "../workspace.ts";

const TOKENS = { inputTokens: 2000, cachedInputTokens: 0, outputTokens: 400 };

const batchUsage: UsageReport = {
  microUsd: 6000,
  source: "estimated",
  batch: true,
  byModel: { "claude-sonnet-5": { ...TOKENS, microUsd: 6000, listMicroUsd: 12_000 } },
};
const realTime: UsageReport = {
  microUsd: 20_000,
  source: "reported",
  byModel: { "claude-sonnet-5": { inputTokens: 100, outputTokens: 10, microUsd: 20_000 } },
};

Deno.test("estimateMicroUsd(): the batch price is half the real-time price of the same tokens", () => {
  assert.equal(BATCH_PRICE_FACTOR, 0.5);
  // sonnet: $3 / $15 per MTok.
  assert.equal(estimateMicroUsd("claude-sonnet-5", TOKENS), 12_000);
  assert.equal(estimateMicroUsd("claude-sonnet-5", TOKENS, { batch: true }), 6000);
});

Deno.test("addUsage(): by_task says batch while all its spend was batch, false once real time spent", () => {
  let report = addUsage(emptyCostReport(), "t1", batchUsage);
  assert.deepEqual(report.by_task.t1, { micro_usd: 6000, model: "claude-sonnet-5", batch: true });
  report = addUsage(report, "t1", realTime);
  assert.deepEqual(report.by_task.t1, {
    micro_usd: 26_000,
    model: "claude-sonnet-5",
    batch: false,
  });
  report = addUsage(report, "t2", realTime);
  assert.equal("batch" in report.by_task.t2, false, "a task never batched has no flag");
  assert.equal(report.total_micro_usd, 46_000, "the budget counts batch spend");
});

Deno.test("costRecords() and batchSavings(): what batching saved, also when the report is rebuilt", () => {
  const records = [
    ...costRecords(batchUsage, { ts: 100, taskId: "t1" }),
    ...costRecords(realTime, { ts: 200, taskId: "t1" }),
    ...costRecords(batchUsage, { ts: 300, taskId: "t2" }),
  ];
  assert.deepEqual(
    [records[0].batch, records[0].list_micro_usd, records[1].batch],
    [true, 12_000, undefined],
  );
  assert.deepEqual(batchSavings(records), {
    saved_micro_usd: 12_000,
    batch_micro_usd: 12_000,
    tasks: 2,
  });
  assert.deepEqual(batchSavings(records, 250), {
    saved_micro_usd: 6000,
    batch_micro_usd: 6000,
    tasks: 1,
  });
  const rebuilt = reportFromRecords(records);
  assert.equal(rebuilt.by_task.t1.batch, false);
  assert.equal(rebuilt.by_task.t2.batch, true);
});

Deno.test("the budget stop names batch routing as the run's adapter can have it (spec §7.3)", () => {
  const report = {
    ...emptyCostReport(1),
    total_micro_usd: 999_000,
    by_task: { t1: { micro_usd: 999_000, model: "m" } },
  };
  const hint =
    "batch routing (batch_eligible: true sends claude tasks to Anthropic's Message Batches API at half the price)";
  const stop = new SpendTracker({} as WorkspacePaths, { name: "claude" }, report, hint)
    .checkBudget();
  assert.ok(stop);
  // Below the budget still, so the message says what would pass it.
  assert.match(
    stop.message,
    /spent \$0\.9990 of \$1\.0000, and the next task is estimated at \$0\.9990;/,
  );
  assert.ok(
    stop.message.endsWith(`use cheaper models (complexity: low) or ${hint}.`),
    stop.message,
  );
});
