import assert from "node:assert/strict";
import { buildSpendView, formatMicroUsd, formatSpendView } from "./spend_view.ts";
import type { CostRecord } from "../agents/cost_summary.ts";

const plain = { red: (s: string) => s, yellow: (s: string) => s, bold: (s: string) => s };
const rec = (ts: number, task_id: string, model: string, micro_usd: number): CostRecord => ({
  ts,
  task_id,
  model,
  micro_usd,
  input_tokens: 10,
  output_tokens: 1,
});

Deno.test("formatMicroUsd() renders dollars with 4 decimals, rounding half up", () => {
  assert.equal(formatMicroUsd(0), "$0.0000");
  assert.equal(formatMicroUsd(49), "$0.0000");
  assert.equal(formatMicroUsd(50), "$0.0001");
  assert.equal(formatMicroUsd(1_234_560), "$1.2346");
  assert.equal(formatMicroUsd(12_000_000), "$12.0000");
  assert.equal(formatMicroUsd(-1_500), "-$0.0015");
});

Deno.test("buildSpendView() filters records by --last and keeps the all-time total", () => {
  const records = [rec(100, "a", "m1", 5), rec(1000, "b", "m2", 7), rec(1900, "b", "m1", 3)];
  const view = buildSpendView({ records, badLines: [] }, {
    by: "task",
    last: { text: "15m", seconds: 900 },
    now: 2000,
  });
  assert.equal(view.since, 1100);
  assert.deepEqual(view.rows.map((r) => [r.key, r.micro_usd]), [["b", 3]]);
  assert.equal(view.window_micro_usd, 3);
  assert.equal(view.total_micro_usd, 15, "no report: the total is the sum of every record");
  assert.equal(view.budget_used, null);
});

Deno.test("buildSpendView() takes the budget from the config over the report", () => {
  const report = { total_micro_usd: 50, by_model: {}, by_task: {}, budget_micro_usd: 100 };
  const fromReport = buildSpendView({ badLines: [], report }, { by: "model", now: 0 });
  assert.equal(fromReport.budget_used, 0.5);
  assert.equal(fromReport.source, "cost_report.json");
  const fromConfig = buildSpendView({ badLines: [], report }, {
    by: "model",
    now: 0,
    configBudgetMicroUsd: 200,
  });
  assert.equal(fromConfig.budget_micro_usd, 200);
  assert.equal(fromConfig.budget_used, 0.25);
});

Deno.test("formatSpendView() says when nothing was spent, overall or in the window", () => {
  const none = formatSpendView(buildSpendView({ badLines: [] }, { by: "model", now: 0 }), plain);
  assert.match(none[0], /^no spend recorded yet/);
  const view = buildSpendView({ records: [rec(1, "a", "m", 9)], badLines: [] }, {
    by: "model",
    last: { text: "1h", seconds: 3600 },
    now: 100_000,
  });
  const lines = formatSpendView(view, plain);
  assert.equal(lines[0], "no spend in the last 1h (by model)");
  assert.match(lines[1], /^total: \$0\.0000 \(no budget/);
});
