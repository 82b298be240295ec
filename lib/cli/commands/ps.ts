/** `service ps`: agent processes from the PID files. */
import { parseArgs } from "node:util";
import { colour, type Command } from "../command.ts";
import { readPidFiles } from "../../agents/pid_files.ts";
import { workspacePaths } from "../../workspace.ts";

export const psCommand: Command = {
  name: "ps",
  summary: "list agent processes from .sdd/runtime/pids/",
  help: `Usage: service ps [--json] [--all] [--root DIR]

Lists the agents recorded in .sdd/runtime/pids/*.json with whether each process still runs.
A dead process with a PID file left behind is stale: \`service doctor\` explains how to clear it.

Options:
  --json   print JSON
  --all    include stale entries (dead processes) in the table (JSON always includes them)`,
  async run(args, ctx) {
    const { values } = parseArgs({
      args,
      options: {
        json: { type: "boolean", default: false },
        all: { type: "boolean", default: false },
      },
    });
    const agents = await readPidFiles(workspacePaths(ctx.root));
    if (values.json) {
      ctx.stdout(JSON.stringify({ agents }, null, 2));
      return 0;
    }
    const shown = values.all ? agents : agents.filter((a) => a.alive);
    const stale = agents.length - agents.filter((a) => a.alive).length;
    if (shown.length === 0) ctx.stdout("no agents running");
    else {
      const rows = [["SESSION", "PID", "STATE", "TASK", "ROLE", "STARTED"]];
      for (const a of shown) {
        rows.push([
          a.session_id,
          String(a.pid ?? "-"),
          a.alive ? "running" : "stale",
          a.task_id ?? "-",
          a.role ?? "-",
          a.started_at ?? "-",
        ]);
      }
      const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
      for (const r of rows) ctx.stdout(r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd());
    }
    if (stale > 0 && !values.all) {
      ctx.stdout(
        colour.yellow(
          `${stale} stale PID file(s): see \`service ps --all\` and \`service doctor\``,
        ),
      );
    }
    return 0;
  },
};
