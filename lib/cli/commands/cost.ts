/** `service cost`: spend by model or task, optionally over the last period, against the budget. */
import { CliError, colour, type Command } from "../command.ts";
import { parseDuration } from "../../cost/records.ts";
import { loadConfig } from "../../config/load.ts";
import { configuredBudgetUsd, readSpend } from "../../cost/spend.ts";
import { buildSpendView, formatSpendView } from "../../cost/spend_view.ts";
import { workspacePaths } from "../../workspace.ts";
import { parseOptions } from "./_options.ts";

/** `service cost`: spend by model or task, against the budget. */
export const costCommand: Command = {
  name: "cost",
  summary: "spend by model or task, against the budget",
  help: `Usage: service cost [--by model|task] [--last DURATION] [--json] [--root DIR]

Spend recorded as agents finish: per-usage records in .sdd/metrics/cost.jsonl and the running
total in .sdd/runtime/cost_report.json. Shows one row per model (or task) with its cost in
dollars and its input/output tokens, the all-time total, the budget (budget_usd in service.yaml)
and the share of it used.

Options:
  --by model|task   group rows by model (default) or by task
  --last DURATION   only spend in the last DURATION: a number and s, m, h or d (30m, 24h, 7d)
  --json            print JSON: {by, last, since, source, rows, window_micro_usd,
                    total_micro_usd, budget_micro_usd, budget_used, bad_lines}; money in micro-USD`,
  async run(args, ctx) {
    const values = parseOptions("cost", args, {
      by: { type: "string", default: "model" },
      last: { type: "string" },
      json: { type: "boolean", default: false },
    });
    const by = values.by as string;
    if (by !== "model" && by !== "task") {
      throw new CliError(`unknown --by value ${JSON.stringify(by)}: use --by model or --by task`);
    }
    let last: { text: string; seconds: number } | undefined;
    if (values.last !== undefined) {
      const text = values.last as string;
      const seconds = parseDuration(text);
      if (seconds === undefined || seconds <= 0) {
        throw new CliError(
          `bad --last value ${JSON.stringify(text)}: use a positive number and a unit ` +
            "s, m, h or d, for example --last 30m, --last 24h or --last 7d",
        );
      }
      last = { text, seconds };
    }
    let budgetUsd: number | null | undefined;
    try {
      budgetUsd = configuredBudgetUsd(await loadConfig(ctx.root));
    } catch (e) {
      ctx.stderr(
        colour.yellow(
          `warning: service.yaml not usable (${(e as Error).message.split("\n")[0]}); ` +
            "the budget comes from cost_report.json",
        ),
      );
    }
    const spend = await readSpend(workspacePaths(ctx.root), budgetUsd);
    const view = buildSpendView(spend, { by, last, now: Math.floor(Date.now() / 1000) });
    if (values.json) ctx.stdout(JSON.stringify(view, null, 2));
    else for (const line of formatSpendView(view, colour)) ctx.stdout(line);
    return 0;
  },
};
