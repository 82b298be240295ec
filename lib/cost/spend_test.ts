import assert from "node:assert/strict";
import { addUsage, emptyCostReport, type UsageReport } from "./report.ts";
import { costRecords } from "./records.ts";
import { workspacePaths } from "../workspace.ts";
import {
  configuredBudgetUsd,
  readCostReport,
  readSpend,
  SpendFileError,
  spendSummary,
  writeSpend,
} from "./spend.ts";

const HAIKU: UsageReport = {
  microUsd: 1350,
  byModel: { "claude-haiku-4-5": { inputTokens: 1200, outputTokens: 30, microUsd: 1350 } },
  source: "reported",
};

async function withWorkspace(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await Deno.makeTempDir({ prefix: "spend-" });
  try {
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("writeSpend() works on a fresh workspace and readSpend() reads back what it wrote", async () => {
  await withWorkspace(async (root) => {
    const paths = workspacePaths(root);
    const report = addUsage(emptyCostReport(2.5), "t1", HAIKU);
    await writeSpend(paths, report, costRecords(HAIKU, { ts: 1, taskId: "t1" }));
    const state = await readSpend(paths, undefined);
    assert.deepEqual(state.report, report);
    assert.equal(state.records?.length, 1);
    assert.equal(state.budgetMicroUsd, 2_500_000);
    assert.deepEqual([...Deno.readDirSync(paths.runtime)].map((e) => e.name), [
      "cost_report.json",
    ]);
  });
});

Deno.test("configuredBudgetUsd(): the config's budget, null for none, undefined without config", () => {
  assert.equal(configuredBudgetUsd(undefined), undefined);
  assert.equal(configuredBudgetUsd({ budget_usd: 3 } as never), 3);
  assert.equal(configuredBudgetUsd({} as never), null);
});

Deno.test("readSpend(): the configured budget wins over the report's; without config the report's stands", async () => {
  await withWorkspace(async (root) => {
    const paths = workspacePaths(root);
    await writeSpend(paths, addUsage(emptyCostReport(1), "t1", HAIKU), []);
    assert.equal((await readSpend(paths, 10)).budgetMicroUsd, 10_000_000);
    assert.equal((await readSpend(paths, null)).budgetMicroUsd, null);
    assert.equal((await readSpend(paths, undefined)).budgetMicroUsd, 1_000_000);
    assert.equal((await readCostReport(paths, 10)).budget_micro_usd, 10_000_000);
    assert.equal((await readCostReport(paths, 10)).total_micro_usd, 1350);
  });
});

Deno.test("readCostReport(): nothing spent yet gives an empty report with the configured budget", async () => {
  await withWorkspace(async (root) => {
    const paths = workspacePaths(root);
    assert.deepEqual(await readCostReport(paths, 4), emptyCostReport(4));
    assert.deepEqual(await readCostReport(paths, undefined), emptyCostReport());
    assert.deepEqual(spendSummary(await readSpend(paths, 4)), {
      total_micro_usd: 0,
      budget_micro_usd: 4_000_000,
      remaining_micro_usd: 4_000_000,
      over_budget: false,
      reported: false,
    });
  });
});

Deno.test("readSpend(): a missing report is rebuilt from cost.jsonl, so the budget still counts it", async () => {
  await withWorkspace(async (root) => {
    const paths = workspacePaths(root);
    await writeSpend(paths, emptyCostReport(), [
      ...costRecords(HAIKU, { ts: 1, taskId: "t1" }),
      ...costRecords(HAIKU, { ts: 2, taskId: "t2" }),
    ]);
    await Deno.remove(paths.costReport);
    const report = await readCostReport(paths, 0.002);
    assert.equal(report.total_micro_usd, 2700);
    assert.deepEqual(Object.keys(report.by_task), ["t1", "t2"]);
    assert.equal(report.by_task.t1.model, "claude-haiku-4-5");
    assert.deepEqual(report.by_model["claude-haiku-4-5"], {
      micro_usd: 2700,
      input_tokens: 2400,
      output_tokens: 60,
    });
    assert.equal(spendSummary(await readSpend(paths, 0.002)).over_budget, true);
  });
});

const BROKEN_REPORTS: [string, string][] = [
  ["torn JSON", '{"total_micro_usd": 12'],
  ["empty file", ""],
  ["an array", "[1, 2]"],
  ["null", "null"],
  ["a string total", '{"total_micro_usd": "12"}'],
  ["a string budget", '{"total_micro_usd": 12, "budget_micro_usd": "5"}'],
];
for (const [name, text] of BROKEN_REPORTS) {
  Deno.test(`readSpend(): a cost report that is ${name} is an error naming the file and the fix`, async () => {
    await withWorkspace(async (root) => {
      const paths = workspacePaths(root);
      await Deno.mkdir(paths.runtime, { recursive: true });
      await Deno.writeTextFile(paths.costReport, text);
      for (const read of [() => readSpend(paths, 5), () => readCostReport(paths, 5)]) {
        const e = await read().then(() => undefined, (e) => e);
        assert.ok(e instanceof SpendFileError, String(e));
        assert.ok(e.message.includes(paths.costReport), e.message);
        assert.match(e.fix, /delete .*cost_report\.json.*rebuilt from .*cost\.jsonl/);
      }
      assert.equal(await Deno.readTextFile(paths.costReport), text, "nothing stored is lost");
    });
  });
}

Deno.test("readSpend(): a torn last line of cost.jsonl is skipped and reported", async () => {
  await withWorkspace(async (root) => {
    const paths = workspacePaths(root);
    await writeSpend(paths, emptyCostReport(), costRecords(HAIKU, { ts: 1, taskId: "t1" }));
    await Deno.writeTextFile(paths.costRecords, '{"ts": 2, "micro', { append: true });
    const state = await readSpend(paths, undefined);
    assert.deepEqual(state.badLines, [2]);
    assert.equal(state.records?.length, 1);
  });
});
