/** `service runs`: every run with its status, board counts and board URL. */
import { colour, type Command } from "../command.ts";
import { parseOptions } from "./_options.ts";
import { loadWorkspaceConfig } from "../../config/load.ts";
import { listRuns } from "../../runs/runs.ts";
import type { RunSummary } from "../../runs/summary_types.ts";
import { findWorkspaceServer } from "../../discovery/find.ts";
import { workspacePaths } from "../../workspace.ts";
import { printable } from "../../util/printable.ts";
import { DAMAGE_IN_A_LIST } from "../../runs/journal_damage.ts";

const COLUMNS = ["queued", "running", "gated", "needs_review", "merged"] as const;

function plan(run: RunSummary): string {
  const started = run.started as Record<string, unknown> | null;
  return typeof started?.plan === "string" ? started.plan : "-";
}

function paint(status: RunSummary["status"]): string {
  switch (status) {
    case "completed":
      return colour.green(status);
    case "failed":
    case "interrupted":
    case "unverified":
      return colour.red(status);
    case "resumable":
      return colour.yellow(status);
    default:
      return colour.yellow(status);
  }
}

/** Cards of `column`; FAILED and CANCELLED tasks, whose cards the board keeps in gated, apart. */
function columnCount(run: RunSummary, column: typeof COLUMNS[number]): number {
  const cards = run.counts[column] ?? 0;
  return column === "gated" ? Math.max(0, cards - run.failed - run.cancelled) : cards;
}

/** `service runs`: list runs: status, board columns and board URL. */
export const runsCommand: Command = {
  name: "runs",
  summary: "list runs: status, board columns and board URL",
  help: `Usage: service runs [--json] [--root DIR]

Lists every run of the workspace (.sdd/runs/<run_id>/journal.jsonl), newest first: its status
(running, completed, failed, stopped, interrupted when its process is gone, or resumable when
tasks were retried or unblocked after it ended — \`service run\` resumes those two — or
unverified when its journal does not verify: it cannot be resumed, and a line under the table
names the bad line, how many lines before it verify, and what to do), its plan, the
cards in each board column with FAILED and CANCELLED tasks counted apart from gated, whether its
journal verifies, and the URL of its board (served while a run lasts, or by \`service serve\`).
A run's status is recomputed when its tasks are cancelled or retried after it ended.

Options:
  --json   print JSON`,
  async run(args, ctx) {
    const values = parseOptions("runs", args, { json: { type: "boolean", default: false } });
    const paths = workspacePaths(ctx.root);
    const runs = await listRuns(paths);
    // The board is served by the workspace's own server (a run's or `service serve`'s).
    const live = (await findWorkspaceServer(ctx.root)).found?.url;
    const base = live ?? await configuredUrl(ctx.root);
    const url = (id: string) => `${base}/dashboard/review-board?run=${encodeURIComponent(id)}`;
    if (values.json) {
      ctx.stdout(JSON.stringify(
        { runs: runs.map((r) => ({ ...r, board_url: url(r.run_id) })) },
        null,
        2,
      ));
      return 0;
    }
    if (runs.length === 0) {
      ctx.stdout("no runs yet: `service run plan.yaml` starts one");
      return 0;
    }
    const rows = [[
      "RUN",
      "STATUS",
      "PLAN",
      ...COLUMNS.map((c) => c.toUpperCase()),
      "FAILED",
      "CANCELLED",
      "JOURNAL",
    ]];
    for (const r of runs) {
      rows.push([
        r.run_id,
        r.status,
        plan(r),
        ...COLUMNS.map((c) => String(columnCount(r, c))),
        String(r.failed),
        String(r.cancelled),
        r.journal_damage?.kind === "empty" ? "EMPTY" : r.journal_verified ? "verified" : "TAMPERED",
      ]);
    }
    // A plan's name and a run's facts come from its journal: escaped, one line each.
    for (const row of rows) row.forEach((c, j) => row[j] = printable(c));
    const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
    rows.forEach((row, i) => {
      const cells = row.map((c, j) => c.padEnd(widths[j]));
      if (i > 0) cells[1] = paint(runs[i - 1].status) + " ".repeat(widths[1] - row[1].length);
      ctx.stdout(cells.join("  ").trimEnd());
    });
    ctx.stdout(`board: ${url(runs[0].run_id)}${live ? "" : "  (start it with `service serve`)"}`);
    for (const r of runs.filter((r) => r.journal_damage)) {
      ctx.stdout(colour.red(printable(
        `${r.run_id}: its journal does not verify: ${r.journal_damage!.words}`,
      )));
    }
    if (runs.some((r) => r.journal_damage)) ctx.stdout(`  ${DAMAGE_IN_A_LIST}`);
    return 0;
  },
};

/** Where `service serve` would listen, by service.yaml and SERVICE_PORT. */
async function configuredUrl(root: string): Promise<string> {
  const { server } = await loadWorkspaceConfig(root);
  return `http://${server.host}:${server.port}`;
}
