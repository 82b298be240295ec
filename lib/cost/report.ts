/** Spend against budget from `.sdd/runtime/cost_report.json` (DESIGN.md §7). */
import { join } from "node:path";
import type { WorkspacePaths } from "../workspace.ts";

/** The `spend` part of `/status`. */
export interface SpendSummary {
  total_micro_usd: number;
  budget_micro_usd: number | null;
  remaining_micro_usd: number | null;
  over_budget: boolean;
  /** False when no cost report exists yet. */
  reported: boolean;
}

/** `.sdd/runtime/cost_report.json`. */
export function costReportPath(paths: WorkspacePaths): string {
  return join(paths.runtime, "cost_report.json");
}

/** Read the cost report; `budgetUsd` (config) applies when the report names no budget. */
export async function readSpend(paths: WorkspacePaths, budgetUsd?: number): Promise<SpendSummary> {
  let report: Record<string, unknown> | undefined;
  try {
    report = JSON.parse(await Deno.readTextFile(costReportPath(paths)));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound) && !(e instanceof SyntaxError)) throw e;
  }
  const total = typeof report?.total_micro_usd === "number" ? report.total_micro_usd : 0;
  const budget = typeof report?.budget_micro_usd === "number"
    ? report.budget_micro_usd
    : budgetUsd !== undefined
    ? Math.round(budgetUsd * 1_000_000)
    : null;
  return {
    total_micro_usd: total,
    budget_micro_usd: budget,
    remaining_micro_usd: budget === null ? null : budget - total,
    over_budget: budget !== null && total >= budget,
    reported: report !== undefined,
  };
}
