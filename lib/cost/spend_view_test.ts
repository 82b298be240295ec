import assert from "node:assert/strict";
import { buildSpendView, formatSpendView } from "./spend_view.ts";
import type { CostRecord } from "./records.ts";
import { reportFromRecords } from "./spend.ts";

const NOTHING = { badLines: [], budgetMicroUsd: null };

const plain = { red: (s: string) => s, yellow: (s: string) => s, bold: (s: string) => s };
const rec = (ts: number, task_id: string, model: string, micro_usd: number): CostRecord => ({
  ts,
  task_id,
  model,
  micro_usd,
  input_tokens: 10,
  output_tokens: 1,
});

Deno.test("buildSpendView() filters records by --last and keeps the all-time total", () => {
  const records = [rec(100, "a", "m1", 5), rec(1000, "b", "m2", 7), rec(1900, "b", "m1", 3)];
  const report = reportFromRecords(records);
  const view = buildSpendView({ records, report, badLines: [], budgetMicroUsd: null }, {
    by: "task",
    last: { text: "15m", seconds: 900 },
    now: 2000,
  });
  assert.equal(view.since, 1100);
  assert.deepEqual(view.rows.map((r) => [r.key, r.micro_usd]), [["b", 3]]);
  assert.equal(view.window_micro_usd, 3);
  assert.equal(view.total_micro_usd, 15, "the window does not change the all-time total");
  assert.equal(view.budget_used, null);
});

Deno.test("buildSpendView() shows the budget in force and the share of it used", () => {
  const report = { total_micro_usd: 50, by_model: {}, by_task: {}, budget_micro_usd: 100 };
  const view = buildSpendView({ badLines: [], report, budgetMicroUsd: 200 }, {
    by: "model",
    now: 0,
  });
  assert.equal(view.source, "cost_report.json");
  assert.equal(view.budget_micro_usd, 200);
  assert.equal(view.budget_used, 0.25);
});

Deno.test("formatSpendView() says when nothing was spent, overall or in the window", () => {
  const none = formatSpendView(buildSpendView(NOTHING, { by: "model", now: 0 }), plain);
  assert.match(none[0], /^no spend recorded yet/);
  const records = [rec(1, "a", "m", 9)];
  const state = { records, report: reportFromRecords(records), badLines: [], budgetMicroUsd: null };
  const view = buildSpendView(state, {
    by: "model",
    last: { text: "1h", seconds: 3600 },
    now: 100_000,
  });
  const lines = formatSpendView(view, plain);
  assert.equal(lines[0], "no spend in the last 1h (by model)");
  assert.match(lines[1], /^total: \$0\.0000 \(no budget/);
});
