/**
 * Spend of a run: each agent's usage (its adapter read it from the CLI's own output) is added to
 * `.sdd/runtime/cost_report.json` and `.sdd/metrics/cost.jsonl`; the budget decision stops
 * scheduling before the next task would pass `budget_usd` (spec §7.3 "Budget exceeded").
 */
import type { WorkspacePaths } from "../workspace.ts";
import { formatUsd } from "./money.ts";
import { costRecords } from "./records.ts";
import { addUsage, type CostReport, type UsageReport, wouldExceedBudget } from "./report.ts";
import { writeSpend } from "./spend.ts";
import { serialised } from "../async/serialised.ts";

/** The expected cost of one more task: the average so far (0 before any spend). */
function nextTaskEstimate(report: CostReport): number {
  const tasks = Object.keys(report.by_task).length;
  return tasks > 0 ? Math.ceil(report.total_micro_usd / tasks) : 0;
}

/** Why the run went read-only, once it did. */
export interface BudgetStop {
  total_micro_usd: number;
  budget_micro_usd: number;
  estimate_micro_usd: number;
  message: string;
}

/** Records spend and decides when the budget forbids another agent. */
export class SpendTracker {
  #report: CostReport;
  #stopped?: BudgetStop;
  readonly #paths: WorkspacePaths;
  readonly #adapter: string;
  readonly #batchRouting: string;

  /**
   * `adapter` names the CLI in each spend record; `batchRouting` says how batch routing is had
   * with it (the budget stop names it, spec §7.3).
   */
  constructor(
    paths: WorkspacePaths,
    adapter: { name: string },
    report: CostReport,
    batchRouting = "batch routing (batch_eligible: true)",
  ) {
    this.#paths = paths;
    this.#adapter = adapter.name;
    this.#report = report;
    this.#batchRouting = batchRouting;
  }

  /** Why the run went read-only, once it did. */
  get budgetStop(): BudgetStop | undefined {
    return this.#stopped;
  }

  /** True once the budget would be passed by one more task: no new agents start. */
  get readOnly(): boolean {
    return this.#stopped !== undefined;
  }

  /**
   * Add what an attempt of `taskId` spent (nothing when its CLI reported no usage); `adapter`
   * names the CLI (or batch lane) that spent it when it is not the configured one.
   */
  async record(
    taskId: string,
    sessionId: string,
    usage: UsageReport | undefined,
    meta: { adapter?: string } = {},
  ): Promise<void> {
    if (!usage) return;
    this.#report = addUsage(this.#report, taskId, usage);
    const records = costRecords(usage, {
      ts: Math.floor(Date.now() / 1000),
      taskId,
      adapter: meta.adapter ?? this.#adapter,
      sessionId,
    });
    // Agents that end together record at once: one write at a time, each of the latest report,
    // so an older report never lands over a newer one.
    await serialised(
      `spend:${this.#paths.costReport}`,
      () => writeSpend(this.#paths, this.#report, records),
    );
  }

  /** The budget stop, the first time one more task would pass the budget; undefined otherwise. */
  checkBudget(): BudgetStop | undefined {
    const report = this.#report;
    if (this.#stopped || report.budget_micro_usd === null) return undefined;
    const estimate = nextTaskEstimate(report);
    if (!wouldExceedBudget(report, estimate)) return undefined;
    this.#stopped = {
      total_micro_usd: report.total_micro_usd,
      budget_micro_usd: report.budget_micro_usd,
      estimate_micro_usd: estimate,
      message: `Budget exceeded, read-only mode: spent ${formatUsd(report.total_micro_usd)} of ${
        formatUsd(report.budget_micro_usd)
      }, and the next task is estimated at ${
        formatUsd(estimate)
      }; no new agents start. Raise budget_usd, use cheaper models (complexity: low) or ${this.#batchRouting}.`,
    };
    return this.#stopped;
  }
}
