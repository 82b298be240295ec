/**
 * What `service cost` shows: spend per model or per task from the per-usage records of
 * `.sdd/metrics/cost.jsonl` (filterable by time), with the all-time total and the budget of
 * `.sdd/runtime/cost_report.json` (DESIGN.md §7), as `readSpend` of ./spend.ts read them.
 * Pure.
 */
import { formatUsd } from "./money.ts";
import type { CostReport } from "./report.ts";
import { batchSavings, type CostSummaryRow, summarizeCost } from "./records.ts";
import type { SpendState } from "./spend.ts";
import { printable } from "../util/printable.ts";

/** Options of {@link buildSpendView}. */
export interface SpendViewOptions {
  by: "model" | "task";
  /** `--last` as given (e.g. `24h`), with its length in seconds. */
  last?: { text: string; seconds: number };
  /** Now, in epoch seconds. */
  now: number;
}

/** The `--json` shape of `service cost`. */
export interface SpendView {
  by: "model" | "task";
  /** `--last` as given, or null for all time. */
  last: string | null;
  /** Epoch seconds of the window's start, or null for all time. */
  since: number | null;
  /** Where the rows came from. */
  source: "cost.jsonl" | "cost_report.json" | "none";
  rows: CostSummaryRow[];
  /** Sum of the rows (the window's spend). */
  window_micro_usd: number;
  /** All-time spend: the report's total (rebuilt from the records when it is missing). */
  total_micro_usd: number;
  budget_micro_usd: number | null;
  /** total / budget, or null without a budget. */
  budget_used: number | null;
  /** Line numbers of cost.jsonl that did not parse and were skipped. */
  bad_lines: number[];
  /**
   * The batch lane in the window (DESIGN.md §15): what its requests cost at the batch price, what
   * the same tokens cost in real time minus that (`saved_micro_usd`), and how many tasks.
   */
  batch: { saved_micro_usd: number; batch_micro_usd: number; tasks: number };
}

function rowsFromReport(report: CostReport, by: "model" | "task"): CostSummaryRow[] {
  const rows: CostSummaryRow[] = by === "model"
    ? Object.entries(report.by_model).map(([key, m]) => ({
      key,
      micro_usd: m.micro_usd,
      input_tokens: m.input_tokens,
      output_tokens: m.output_tokens,
      records: 0,
    }))
    : Object.entries(report.by_task).map(([key, t]) => ({
      key,
      micro_usd: t.micro_usd,
      input_tokens: 0,
      output_tokens: 0,
      records: 0,
    }));
  return rows.sort((a, b) => b.micro_usd - a.micro_usd || a.key.localeCompare(b.key));
}

/**
 * The view of `service cost`. Rows come from the records (the only source with timestamps);
 * without records and without `--last`, from the report's `by_model` / `by_task`. Pure.
 */
export function buildSpendView(sources: SpendState, options: SpendViewOptions): SpendView {
  const since = options.last ? options.now - options.last.seconds : undefined;
  let rows: CostSummaryRow[] = [];
  let source: SpendView["source"] = "none";
  if (sources.records !== undefined && sources.records.length > 0) {
    rows = summarizeCost(sources.records, { by: options.by, since });
    source = "cost.jsonl";
  } else if (sources.report && since === undefined) {
    rows = rowsFromReport(sources.report, options.by);
    source = "cost_report.json";
  } else if (sources.report) source = "cost_report.json";
  const total = sources.report?.total_micro_usd ?? 0;
  const budget = sources.budgetMicroUsd;
  return {
    by: options.by,
    last: options.last?.text ?? null,
    since: since ?? null,
    source,
    rows,
    window_micro_usd: rows.reduce((s, r) => s + r.micro_usd, 0),
    total_micro_usd: total,
    budget_micro_usd: budget,
    budget_used: budget === null || budget <= 0 ? null : total / budget,
    bad_lines: sources.badLines,
    batch: batchSavings(sources.records ?? [], since),
  };
}

function table(rows: string[][], rightAligned: Set<number>): string[] {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) =>
    r.map((c, i) => (rightAligned.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join("  ").trimEnd()
  );
}

/** Colour functions used by {@link formatSpendView}. */
export interface SpendPalette {
  yellow: (s: string) => string;
  red: (s: string) => string;
  bold: (s: string) => string;
}

/** The text of `service cost` (without `--json`). Pure. */
export function formatSpendView(view: SpendView, p: SpendPalette): string[] {
  const window = view.last ? ` in the last ${view.last}` : "";
  const lines: string[] = [];
  if (view.source === "none") {
    return [
      "no spend recorded yet: agents' spend is recorded in .sdd/metrics/cost.jsonl and " +
      ".sdd/runtime/cost_report.json as each agent finishes",
      ...budgetLines(view, p),
    ];
  }
  if (view.rows.length === 0) {
    lines.push(`no spend${window} (by ${view.by})`);
  } else {
    lines.push(p.bold(`spend by ${view.by}${window}`));
    const head = [view.by === "model" ? "MODEL" : "TASK", "COST", "TOKENS IN", "TOKENS OUT"];
    const body = view.rows.map((r) => [
      printable(r.key), // a model's name as the agent's CLI reported it
      formatUsd(r.micro_usd),
      String(r.input_tokens),
      String(r.output_tokens),
    ]);
    lines.push(...table([head, ...body], new Set([1, 2, 3])));
    if (view.last) lines.push(`spent${window}: ${formatUsd(view.window_micro_usd)}`);
    if (view.batch.tasks > 0) {
      const b = view.batch;
      lines.push(
        `saved by batching${window}: ${formatUsd(b.saved_micro_usd)} (${b.tasks} task${
          b.tasks === 1 ? "" : "s"
        } through the batch lane cost ${formatUsd(b.batch_micro_usd)}, ${
          formatUsd(b.batch_micro_usd + b.saved_micro_usd)
        } at real-time prices)`,
      );
    }
    if (view.source === "cost_report.json" && view.by === "task") {
      lines.push("(tokens per task are in .sdd/metrics/cost.jsonl, which does not exist yet)");
    }
  }
  lines.push(...budgetLines(view, p));
  return lines;
}

function budgetLines(view: SpendView, p: SpendPalette): string[] {
  const lines: string[] = [];
  const total = formatUsd(view.total_micro_usd);
  if (view.budget_micro_usd === null) {
    lines.push(`total: ${total} (no budget: set budget_usd in service.yaml to cap spend)`);
  } else {
    const share = view.budget_used === null ? "-" : `${(view.budget_used * 100).toFixed(1)}%`;
    const line = `total: ${total} of budget ${formatUsd(view.budget_micro_usd)} (${share} used)`;
    const used = view.budget_used ?? 1;
    lines.push(used >= 1 ? p.red(line) : used >= 0.8 ? p.yellow(line) : line);
    if (used >= 1) {
      lines.push(
        p.red("budget reached: scheduling stops; raise budget_usd or use cheaper models"),
      );
    }
  }
  if (view.bad_lines.length > 0) {
    lines.push(
      p.yellow(
        `skipped ${view.bad_lines.length} unreadable line(s) of .sdd/metrics/cost.jsonl ` +
          `(line ${view.bad_lines.join(", ")}): delete the bad trailing lines`,
      ),
    );
  }
  return lines;
}
