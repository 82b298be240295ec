/** `service agents`: agent adapters and their readiness, and the live agent sessions. */
import { colour, type Command } from "../command.ts";
import { configuredAdapter, loadConfig } from "../../config/load.ts";
import type { AgentAdapter } from "../../agents/adapters/types.ts";
import {
  type AdapterReadiness,
  collectAdapters,
  collectSessions,
  type SessionView,
} from "../../agents/readiness.ts";
import { workspacePaths } from "../../workspace.ts";
import { parseOptions } from "./_options.ts";
import { type McpReport, mcpReport } from "../../mcp/run_servers.ts";
import { printable } from "../../util/printable.ts";
import { RECONNECT_NOTICE_S, reconnectWords } from "../../agents/progress_watch.ts";

/** `75` → `1m15s`; null → `-`. */
function duration(s: number | null): string {
  if (s === null) return "-";
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Aligned rows; each cell escaped (paths, session facts and CLI answers are not ours). */
function table(cells: string[][]): string[] {
  const rows = cells.map((r) => r.map(printable));
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join("  ").trimEnd());
}

function adapterLines(adapters: AdapterReadiness[]): string[] {
  const rows = [["ADAPTER", "BINARY", "API KEY", "COOLDOWN", "READY"]];
  for (const a of adapters) {
    const key = a.api_key_env.length === 0
      ? "none needed"
      : a.api_keys_set.length > 0
      ? `${a.api_keys_set.join(", ")} set`
      : `${a.api_key_env[0]} unset` +
        (a.api_key_env.length > 1 ? ` (or ${a.api_key_env.length - 1} other)` : "");
    rows.push([
      `${a.name}${a.configured ? " *" : ""}`,
      a.binary_path ?? `${a.binary}: not on PATH`,
      key,
      a.cooldown_remaining_s > 0 ? `${a.cooldown_remaining_s}s` : "-",
      a.ready ? "yes" : "no",
    ]);
  }
  const lines = table(rows).map((line, i) => {
    if (i === 0) return colour.bold(line);
    const a = adapters[i - 1];
    return a.ready ? line : a.configured ? colour.red(line) : colour.dim(line);
  });
  const configured = adapters.find((a) => a.configured);
  if (configured) {
    lines.push(`* configured in service.yaml (cli: ${configured.name})`);
    if (configured.fix) {
      const why = configured.headless_problem ? `${configured.headless_problem}; ` : "";
      lines.push(colour.red(printable(`${configured.name} is not ready: ${why}${configured.fix}`)));
    }
  }
  return lines;
}

function sessionLines(sessions: SessionView[], unreadable: string[]): string[] {
  const lines: string[] = [];
  if (sessions.length === 0) lines.push("no agent sessions running");
  else {
    const rows = [["SESSION", "TASK", "PID", "ALIVE", "ELAPSED", "LAST OUTPUT", "LOG BYTES"]];
    for (const s of sessions) {
      rows.push([
        s.session_id,
        s.task_id ?? "-",
        String(s.pid ?? "-"),
        s.alive ? "yes" : "no (stale)",
        duration(s.elapsed_s),
        s.last_output_age_s === null ? "none yet" : `${duration(s.last_output_age_s)} ago`,
        s.log_bytes === null ? "-" : String(s.log_bytes),
      ]);
    }
    lines.push(...table(rows).map((l, i) => (i === 0 ? colour.bold(l) : l)));
    for (const s of sessions) {
      if (s.reconnecting && s.reconnecting.for_s >= RECONNECT_NOTICE_S) {
        lines.push(
          colour.yellow(
            printable(`${s.task_id ?? s.session_id}: ${reconnectWords(s.reconnecting)}`),
          ),
        );
      }
    }
    if (sessions.some((s) => !s.alive)) {
      lines.push(
        colour.yellow(
          "stale PID files (dead processes): `service stop` removes them, or delete .sdd/runtime/pids/<session>.json",
        ),
      );
    }
  }
  for (const path of unreadable) {
    lines.push(colour.yellow(`unreadable PID file ${path}: delete it; it is recreated on spawn`));
  }
  return lines;
}

/** `service agents`: agent adapters and their readiness; live agent sessions. */
export const agentsCommand: Command = {
  name: "agents",
  summary: "agent adapters and their readiness; live agent sessions",
  help: `Usage: service agents [--json] [--root DIR]

Lists every agent adapter (built-in and registered; * marks the one service.yaml's cli: names)
with whether its binary is on PATH, whether one of its API-key variables is set (names only,
never values) and any rate-limit cooldown left (.sdd/runtime/rate_limits.json). Then the agent
sessions with a PID file (.sdd/runtime/pids/): task, pid, whether the process is alive, elapsed
time, time since its last output and its log size (.sdd/runtime/heartbeats/ and the session log).

Options:
  --json   print JSON: {configured, adapters: [...], sessions: [...], unreadable_pid_files,
           mcp_servers: {names, delivered, note} or null}

MCP servers (service.yaml mcp_servers and \`service mcp catalog install\`) reach only adapters
that take a runtime MCP configuration (claude, qwen); a line says so when yours does not.`,
  async run(args, ctx) {
    const values = parseOptions("agents", args, { json: { type: "boolean", default: false } });
    let configured: AgentAdapter | undefined;
    let mcp: McpReport | undefined;
    try {
      const config = await loadConfig(ctx.root);
      if (config) configured = configuredAdapter(config);
      if (config && configured) mcp = await mcpReport(config, configured);
    } catch (e) {
      ctx.stderr(
        colour.yellow(
          `warning: service.yaml not usable: ${(e as Error).message.split("\n")[0]}` +
            " (run `service doctor` for the fix)",
        ),
      );
    }
    const paths = workspacePaths(ctx.root);
    const now = Date.now() / 1000;
    const adapters = await collectAdapters(paths, { configured, now });
    const { sessions, unreadable } = await collectSessions(paths, now);
    if (values.json) {
      ctx.stdout(JSON.stringify(
        {
          configured: configured?.name ?? null,
          adapters,
          sessions,
          unreadable_pid_files: unreadable,
          mcp_servers: mcp ?? null,
        },
        null,
        2,
      ));
      return 0;
    }
    for (const line of adapterLines(adapters)) ctx.stdout(line);
    if (mcp?.note) {
      ctx.stdout(mcp.delivered ? mcp.note : colour.yellow(`warning: ${mcp.note}`));
    }
    ctx.stdout("");
    for (const line of sessionLines(sessions, unreadable)) ctx.stdout(line);
    return 0;
  },
};
