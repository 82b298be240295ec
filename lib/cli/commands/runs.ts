/** `service runs`: every run with its status, board counts and board URL. */
import { colour, type Command } from "../command.ts";
import { parseOptions } from "./_options.ts";
import { loadServerSettings } from "../../config/server_config.ts";
import { listRuns, type RunSummary } from "../../runs/runs.ts";
import { findWorkspaceServer } from "../../discovery/find.ts";
import { workspacePaths } from "../../workspace.ts";

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
      return colour.red(status);
    default:
      return colour.yellow(status);
  }
}

export const runsCommand: Command = {
  name: "runs",
  summary: "list runs: status, board columns and board URL",
  help: `Usage: service runs [--json] [--root DIR]

Lists every run of the workspace (.sdd/runs/<run_id>/journal.jsonl), newest first: its status
(running, completed, failed, stopped, or interrupted when its process is gone — \`service run\`
resumes it), its plan, the cards in each board column, whether its journal verifies, and the URL
of its board (served while a run lasts, or by \`service serve\`).

Options:
  --json   print JSON`,
  async run(args, ctx) {
    const values = parseOptions("runs", args, { json: { type: "boolean", default: false } });
    const paths = workspacePaths(ctx.root);
    const runs = await listRuns(paths);
    // The board is served by the workspace's own server (a run's or `service serve`'s).
    const live = (await findWorkspaceServer(ctx.root)).found?.url;
    const settings = await loadServerSettings(ctx.root);
    const base = live ?? `http://${settings.host}:${settings.port}`;
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
    const rows = [["RUN", "STATUS", "PLAN", ...COLUMNS.map((c) => c.toUpperCase()), "JOURNAL"]];
    for (const r of runs) {
      rows.push([
        r.run_id,
        r.status,
        plan(r),
        ...COLUMNS.map((c) => String(r.counts[c] ?? 0)),
        r.journal_verified ? "verified" : "TAMPERED",
      ]);
    }
    const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
    rows.forEach((row, i) => {
      const cells = row.map((c, j) => c.padEnd(widths[j]));
      if (i > 0) cells[1] = paint(runs[i - 1].status) + " ".repeat(widths[1] - row[1].length);
      ctx.stdout(cells.join("  ").trimEnd());
    });
    ctx.stdout(`board: ${url(runs[0].run_id)}${live ? "" : "  (start it with `service serve`)"}`);
    return 0;
  },
};
