/**
 * The one place that reads and writes spend (DESIGN.md §7): `.sdd/runtime/cost_report.json` (the
 * running total and budget) and `.sdd/metrics/cost.jsonl` (one record per model per usage).
 * `service run`, `/status` and `service cost` all read through {@link readSpend}, so they agree:
 *
 * - the budget of service.yaml wins over the one stored in the report (the report only echoes
 *   the budget of the run that wrote it); without a readable service.yaml the report's is used;
 * - a report that is not a JSON object is an error naming the file and the fix, never read as 0
 *   (that would silently lift the budget);
 * - a missing report is rebuilt from cost.jsonl, so deleting a broken report loses nothing.
 */
import { batchFlag, type CostReport, emptyCostReport } from "./report.ts";
import { type CostRecord, parseCostRecords } from "./records.ts";
import { usdToMicro } from "./prices.ts";
import { UserFacingError } from "../errors.ts";
import type { WorkspacePaths } from "../workspace.ts";
import { appendStateLines } from "../util/locked_append.ts";
import { writeFileAtomic } from "../util/atomic_write.ts";

/** A spend file that cannot be read, with the fix. */
export class SpendFileError extends UserFacingError {
  /** Stable code for callers that branch on the failure. */
  readonly code = "spend_file_unreadable";
  override readonly fix: string;
  constructor(message: string, fix: string, exitCode = 1) {
    super(message, exitCode, fix);
    this.fix = fix;
    this.name = "SpendFileError";
  }
}

/**
 * The budget service.yaml sets, in USD: a number, null when it sets none, undefined when there is
 * no service.yaml (then the report's own budget stands). `config` is the loaded service.yaml (only
 * its `budget_usd` is read, so spend needs nothing else of the configuration).
 */
export function configuredBudgetUsd(
  config: { budget_usd?: number } | undefined,
): number | null | undefined {
  return config === undefined ? undefined : config.budget_usd ?? null;
}

/** Everything recorded about spend, as read from disk. */
export interface SpendState {
  /** The report (the file's, or rebuilt from the records); undefined when nothing was spent. */
  report?: CostReport;
  /** Records of cost.jsonl; undefined when the file does not exist. */
  records?: CostRecord[];
  /** 1-based line numbers of cost.jsonl that did not parse (skipped). */
  badLines: number[];
  /** The budget in force: the configured one, else the report's; null for none. */
  budgetMicroUsd: number | null;
}

/** The `spend` part of `/status`. */
export interface SpendSummary {
  total_micro_usd: number;
  budget_micro_usd: number | null;
  remaining_micro_usd: number | null;
  over_budget: boolean;
  /** False when nothing has been spent or recorded yet. */
  reported: boolean;
}

async function readTextOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw e;
  }
}

function isCount(v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

/** Parse the text of cost_report.json; anything but an object with a numeric total throws. */
function parseCostReport(text: string, path: string): CostReport {
  const fix =
    `delete ${path}: it is rebuilt from .sdd/metrics/cost.jsonl, which keeps every record`;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new SpendFileError(`${path} is not JSON (${(e as Error).message})`, fix);
  }
  const r = raw as Partial<CostReport> | null;
  if (
    r === null || typeof r !== "object" || Array.isArray(r) ||
    (r.total_micro_usd !== undefined && !isCount(r.total_micro_usd)) ||
    (r.budget_micro_usd != null && !isCount(r.budget_micro_usd))
  ) {
    throw new SpendFileError(
      `${path} is not a cost report (expected {"total_micro_usd": N, "by_model", "by_task", ` +
        `"budget_micro_usd"})`,
      fix,
    );
  }
  return {
    total_micro_usd: r.total_micro_usd ?? 0,
    by_model: r.by_model ?? {},
    by_task: r.by_task ?? {},
    budget_micro_usd: r.budget_micro_usd ?? null,
  };
}

/** The report the records add up to (used when cost_report.json is missing). Pure. */
export function reportFromRecords(records: CostRecord[]): CostReport {
  const report = emptyCostReport();
  const taskModels = new Map<string, Map<string, number>>();
  for (const r of records) {
    report.total_micro_usd += r.micro_usd;
    const m = report.by_model[r.model] ??= { micro_usd: 0, input_tokens: 0, output_tokens: 0 };
    m.micro_usd += r.micro_usd;
    m.input_tokens += r.input_tokens ?? 0;
    m.output_tokens += r.output_tokens ?? 0;
    const t = report.by_task[r.task_id] ??= { micro_usd: 0, model: r.model };
    t.micro_usd += r.micro_usd;
    const batch = batchFlag(t.batch, r.batch === true);
    if (batch !== undefined) t.batch = batch;
    const perModel = taskModels.get(r.task_id) ?? new Map<string, number>();
    perModel.set(r.model, (perModel.get(r.model) ?? 0) + r.micro_usd);
    taskModels.set(r.task_id, perModel);
  }
  for (const [task, perModel] of taskModels) {
    report.by_task[task].model = [...perModel].reduce((a, b) => (b[1] > a[1] ? b : a))[0];
  }
  return report;
}

/**
 * Read the spend of the workspace. `budgetUsd` is {@link configuredBudgetUsd} of the config; it
 * replaces the report's budget unless undefined. Records are read when `withRecords` is set or
 * the report is missing.
 */
export async function readSpend(
  paths: WorkspacePaths,
  budgetUsd: number | null | undefined,
  withRecords = true,
): Promise<SpendState> {
  const state: SpendState = { badLines: [], budgetMicroUsd: null };
  const reportText = await readTextOrUndefined(paths.costReport);
  if (withRecords || reportText === undefined) {
    const recordsText = await readTextOrUndefined(paths.costRecords);
    if (recordsText !== undefined) {
      const parsed = parseCostRecords(recordsText);
      state.records = parsed.records;
      state.badLines = parsed.badLines;
    }
  }
  if (reportText !== undefined) state.report = parseCostReport(reportText, paths.costReport);
  else if (state.records && state.records.length > 0) {
    state.report = reportFromRecords(state.records);
  }
  state.budgetMicroUsd = budgetUsd === undefined
    ? state.report?.budget_micro_usd ?? null
    : budgetUsd === null
    ? null
    : usdToMicro(budgetUsd);
  if (state.report) state.report.budget_micro_usd = state.budgetMicroUsd;
  return state;
}

/** The report a run starts from: what was spent so far, with the configured budget. */
export async function readCostReport(
  paths: WorkspacePaths,
  budgetUsd: number | null | undefined,
): Promise<CostReport> {
  const { report, budgetMicroUsd } = await readSpend(paths, budgetUsd, false);
  return report ?? { ...emptyCostReport(), budget_micro_usd: budgetMicroUsd };
}

/** The `spend` part of `/status` from what {@link readSpend} read. Pure. */
export function spendSummary(state: SpendState): SpendSummary {
  const total = state.report?.total_micro_usd ?? 0;
  const budget = state.budgetMicroUsd;
  return {
    total_micro_usd: total,
    budget_micro_usd: budget,
    remaining_micro_usd: budget === null ? null : budget - total,
    over_budget: budget !== null && total >= budget,
    reported: state.report !== undefined,
  };
}

/** Record one usage: rewrite the report atomically and append its records to cost.jsonl. */
export async function writeSpend(
  paths: WorkspacePaths,
  report: CostReport,
  records: CostRecord[],
): Promise<void> {
  await writeFileAtomic(paths.costReport, JSON.stringify(report, null, 2) + "\n");
  if (records.length === 0) return;
  await appendStateLines(paths.costRecords, records.map((r) => JSON.stringify(r) + "\n").join(""));
}
