/** `service ps`: agent processes from the PID files. */
import { parseArgs } from "node:util";
import { colour, type Command } from "../command.ts";
import { readPidFiles } from "../../agents/pid_files.ts";
import { workspacePaths } from "../../workspace.ts";
import { loadTaskSpecs } from "../../tasks/persist.ts";
import { remoteTasks } from "../../status/parts.ts";
import { printable } from "../../util/printable.ts";
import { loadConfig } from "../../config/load.ts";
import { leaseView } from "../../workers/fleet.ts";

/** `service ps`: list agent processes (local PID files, and remote workers' agents). */
export const psCommand: Command = {
  name: "ps",
  summary: "list agent processes (local PID files, and remote workers' agents)",
  help: `Usage: service ps [--json] [--all] [--root DIR]

Lists the agents recorded in .sdd/runtime/pids/*.json with whether each process still runs,
and the agents running on remote workers (\`service worker\`) with the worker that runs each.
A dead process with a PID file left behind is stale: \`service doctor\` explains how to clear it.
A remote agent shows how long ago its worker last renewed its lease (HEARTBEAT), and is \`silent\`
after two missed heartbeats (its worker may be gone) until its lease expires.

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
    const paths = workspacePaths(ctx.root);
    const agents = await readPidFiles(paths);
    // Agents on remote workers have no PID file here: the task store says where they run.
    const timeout = (await loadConfig(ctx.root))?.heartbeat_timeout_s ?? 45;
    const now = Date.now();
    // A worker that died keeps its lease until it runs out: its silence is shown, not "running".
    const remote = remoteTasks((await loadTaskSpecs(paths)).tasks).map((r) => ({
      ...r,
      ...leaseView(r.heartbeat_at, now, timeout),
    }));
    if (values.json) {
      ctx.stdout(JSON.stringify({ agents, remote }, null, 2));
      return 0;
    }
    const shown = values.all ? agents : agents.filter((a) => a.alive);
    const stale = agents.length - agents.filter((a) => a.alive).length;
    if (shown.length === 0 && remote.length === 0) ctx.stdout("no agents running");
    else {
      const rows = [["SESSION", "PID", "STATE", "TASK", "ROLE", "WHERE", "STARTED", "HEARTBEAT"]];
      for (const a of shown) {
        rows.push([
          a.session_id,
          String(a.pid ?? "-"),
          a.alive ? "running" : "stale",
          a.task_id ?? "-",
          a.role ?? "-",
          "local",
          a.started_at ?? "-",
          "-",
        ]);
      }
      for (const r of remote) {
        rows.push([
          r.session_id ?? "-",
          "-",
          r.state,
          r.task_id,
          r.role,
          `worker ${r.worker}`,
          "-",
          r.heartbeat_age_s === null ? "-" : `${r.heartbeat_age_s} s ago`,
        ]);
      }
      // Cells come from PID files and from remote workers (a worker names itself): escaped.
      const cells = rows.map((r) => r.map((c) => printable(String(c))));
      const widths = cells[0].map((_, i) => Math.max(...cells.map((r) => r[i].length)));
      for (const r of cells) {
        ctx.stdout(r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd());
      }
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
