/**
 * Spend tracking (DESIGN.md §7, §15): `.sdd/runtime/cost_report.json` is
 * `{"total_micro_usd", "by_model": {<model>: {"micro_usd","input_tokens","output_tokens"}},
 * "by_task": {<task_id>: {"micro_usd","model"}}, "budget_micro_usd"}`, money in integer micro-USD.
 * A task that went through the batch lane has `"batch": true` in `by_task` while all its spend
 * was at the batch price, `false` once a real-time attempt spent too. Pure arithmetic;
 * ./spend.ts reads and writes the files.
 */
import { usdToMicro } from "./prices.ts";

/** Token and cost figures of one model inside one agent session. */
export interface ModelUsage {
  /** Input tokens, cached ones included. */
  inputTokens: number;
  /** Part of `inputTokens` read from the provider's prompt cache (billed lower), when reported. */
  cachedInputTokens?: number;
  outputTokens: number;
  /** Cost in integer micro-USD (1 USD = 1_000_000). */
  microUsd: number;
  /** Billed at the batch price: what the same tokens cost in real time. */
  listMicroUsd?: number;
}

/** What one agent session spent, as read from the CLI's own output. */
export interface UsageReport {
  /** Total cost in integer micro-USD. */
  microUsd: number;
  /** Per-model breakdown; keys are the model names the CLI reported. */
  byModel: Record<string, ModelUsage>;
  /** `reported`: the CLI printed a cost; `estimated`: tokens × the price table of ./prices.ts. */
  source: "reported" | "estimated";
  /** A batch API's request, billed at the batch price (each model's `listMicroUsd` is set). */
  batch?: boolean;
}

/** Spend of one model. */
export interface ModelSpend {
  micro_usd: number;
  input_tokens: number;
  output_tokens: number;
}

/** Spend of one task; `model` is the model that cost most in its latest usage. */
export interface TaskSpend {
  micro_usd: number;
  model: string;
  /** It went through the batch lane: true while all its spend was at the batch price. */
  batch?: boolean;
}

/** The `batch` flag of a task's spend after one more usage (absent: never batched). */
export function batchFlag(before: boolean | undefined, usageBatch: boolean): boolean | undefined {
  if (usageBatch) return before !== false;
  return before === undefined ? undefined : false;
}

/** The cost report of DESIGN.md §7. */
export interface CostReport {
  total_micro_usd: number;
  by_model: Record<string, ModelSpend>;
  by_task: Record<string, TaskSpend>;
  budget_micro_usd: number | null;
}

/** An empty report with a budget given in USD (`budget_usd`), or none. */
export function emptyCostReport(budgetUsd: number | null = null): CostReport {
  return {
    total_micro_usd: 0,
    by_model: {},
    by_task: {},
    budget_micro_usd: budgetUsd === null ? null : usdToMicro(budgetUsd),
  };
}

function dominantModel(usage: UsageReport): string {
  const entries = Object.entries(usage.byModel);
  if (entries.length === 0) return "unknown";
  return entries.reduce((a, b) => (b[1].microUsd > a[1].microUsd ? b : a))[0];
}

/** A new report with `usage` of `taskId` added. Pure; the input report is not changed. */
export function addUsage(report: CostReport, taskId: string, usage: UsageReport): CostReport {
  const by_model = { ...report.by_model };
  for (const [model, u] of Object.entries(usage.byModel)) {
    const prev = by_model[model] ?? { micro_usd: 0, input_tokens: 0, output_tokens: 0 };
    by_model[model] = {
      micro_usd: prev.micro_usd + u.microUsd,
      input_tokens: prev.input_tokens + u.inputTokens,
      output_tokens: prev.output_tokens + u.outputTokens,
    };
  }
  const prev = report.by_task[taskId];
  const batch = batchFlag(prev?.batch, usage.batch === true);
  return {
    total_micro_usd: report.total_micro_usd + usage.microUsd,
    by_model,
    by_task: {
      ...report.by_task,
      [taskId]: {
        micro_usd: (prev?.micro_usd ?? 0) + usage.microUsd,
        model: dominantModel(usage),
        ...(batch === undefined ? {} : { batch }),
      },
    },
    budget_micro_usd: report.budget_micro_usd,
  };
}

/**
 * True when spending `estimateMicroUsd` more would pass the budget, so scheduling stops before
 * the cap is passed. Reaching the budget exactly is allowed; no budget never exceeds.
 */
export function wouldExceedBudget(report: CostReport, estimateMicroUsd: number): boolean {
  if (report.budget_micro_usd === null) return false;
  return report.total_micro_usd + estimateMicroUsd > report.budget_micro_usd;
}
