/** `service run [plan]`: run a plan with agents in worktrees, in the foreground or detached. */
import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { CliError, colour, type Command } from "../command.ts";
import { verificationLine } from "../../status/format.ts";
import { readRunState, stoppedOutcome } from "../../runs/run_state.ts";
import { journalPath, workspacePaths } from "../../workspace.ts";
import { unchangedTasks } from "../../runs/unchanged_tasks.ts";
import { printable, printableItem } from "../../util/printable.ts";

export const runCommand: Command = {
  name: "run",
  summary: "run a plan: agents in git worktrees, verified and merged",
  help: `Usage: service run [plan.yaml] [--force] [--detach] [--port N] [--root DIR]

Loads service.yaml and the plan, checks the role templates, settings and the agent CLI, records
run_started in a new run journal (.sdd/runs/<run_id>/journal.jsonl), starts the task server,
creates the plan's tasks and runs agents up to max_agents, each in .sdd/worktrees/<session> on
branch agent/<session>. Finished work is diffed, checked against its completion signals on the
merged tree and merged into the current branch. Shows live progress; exits 0 when every task
landed, 1 when any did not (each with what to do about it), 130 when Ctrl-C stopped it (143 for
SIGTERM, e.g. \`service stop\`).

Steps an earlier run of the plan already landed, or an operator marked done, are not run again:
a step is its stage, its position in the stage and its goal (a changed goal is a new step).
--force runs every step.

Without a plan, \`service run\` resumes the run that has unfinished tasks — one interrupted by
\`service stop\`, Ctrl-C or a crash (stale agents are ended; a new attempt continues their kept
work, and the stop counts no attempt), or one with FAILED tasks you retried (\`service retry
<task>\`) — and otherwise runs plan.yaml. Unfinished work can also be cancelled: \`service cancel
<task>\` or \`service cancel --all\`.

Options:
  --force      run every step of the plan, also those that already landed
  --detach     run in the background (output in .sdd/runtime/orchestrator.log)
  --port N     port of the run's task server and board (default SERVICE_PORT, service.yaml
               port, else 8052; a busy default falls back to a free port, a busy chosen one is an error)

Environment:
  SERVICE_AGENT_TIMEOUT_S   wall-clock limit of every agent (default: by scope and role)
  SERVICE_KILL_GRACE_S      SIGTERM to SIGKILL grace (default 30; a second Ctrl-C skips it)
  SERVICE_RATE_LIMIT_COOLDOWN_S  spawn block after a rate limit (default 300)`,
  async run(args, ctx) {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        detach: { type: "boolean", default: false },
        force: { type: "boolean", default: false },
        port: { type: "string" },
      },
    });
    if (positionals.length > 1) {
      throw new CliError(
        `one plan at a time: got ${positionals.length} (${positionals.join(" ")}); ` +
          "run `service run <plan.yaml>`",
      );
    }
    const plan = positionals[0];
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
      throw new CliError(`--port ${values.port} is not a port number (0-65535)`);
    }
    if (values.detach) {
      return await detach(ctx.root, plan, values.port, values.force, ctx.stdout);
    }
    const controller = new AbortController();
    const now = new AbortController();
    /** The signal that stopped the run: its exit code is the shell's (130 Ctrl-C, 143 TERM). */
    let stoppedBy: "SIGINT" | "SIGTERM" | undefined;
    const stopWith = (signal: "SIGINT" | "SIGTERM") => () => {
      if (controller.signal.aborted) {
        // A second Ctrl-C: the user will not wait out the grace. (A second SIGTERM, such as a
        // repeated `service stop`, keeps waiting: it says "again to wait".)
        if (signal === "SIGINT" && !now.signal.aborted) {
          ctx.stderr("stopping now: agents get SIGKILL; their work is kept");
          now.abort();
        }
        return;
      }
      stoppedBy = signal;
      ctx.stderr(
        "stopping: agents get SIGTERM, then SIGKILL after the grace; their work is kept" +
          (signal === "SIGINT" ? " (Ctrl-C again to stop now)" : ""),
      );
      controller.abort();
    };
    const onInt = stopWith("SIGINT");
    const onTerm = stopWith("SIGTERM");
    Deno.addSignalListener("SIGINT", onInt);
    Deno.addSignalListener("SIGTERM", onTerm);
    try {
      // Loaded when run: a server started by the CLI does not keep the orchestrator.
      const { runPlan } = await import("../../runner/run.ts");
      const result = await runPlan({
        root: ctx.root,
        plan,
        port,
        force: values.force,
        out: ctx.stdout,
        signal: controller.signal,
        stopNow: now.signal,
        app: ctx.apps.server,
        alertLine: (nudge, advice) => verificationLine(nudge, colour, advice),
      });
      if (result.upToDate) return 0;
      // The final status line, printed once, then what is left and the way out.
      if (result.status === "completed") {
        // A task whose work changed nothing closed without landing: the line says so.
        const unchanged = await unchangedTasks(journalPath(workspacePaths(ctx.root), result.runId));
        const closed = unchanged.length === 0
          ? "every task landed"
          : `every task closed (${unchanged.length} with no changes to land: ${
            unchanged.slice(0, 5).join(", ")
          }${unchanged.length > 5 ? ", …" : ""})`;
        ctx.stdout(colour.green(
          result.problems.length === 0
            ? `run ${result.runId} completed: ${closed}`
            : `run ${result.runId} completed; ${closed} except:`,
        ));
        for (const p of result.problems) printableItem(p, "  ").forEach((l) => ctx.stdout(l));
        return 0;
      }
      ctx.stdout(colour.red(
        result.status === "stopped"
          // The list below also names FAILED tasks, which count as finished: "not landed" says
          // what it lists.
          ? `run ${result.runId} ${stoppedOutcome(result)}${
            result.problems.length ? "; not landed:" : ""
          }`
          : `run ${result.runId} ${result.status}:`,
      ));
      for (const p of result.problems) printableItem(p, "  ").forEach((l) => ctx.stdout(l));
      // Stopped by a signal: 128 + its number, as a shell reports a process a signal ended.
      if (result.status === "stopped" && stoppedBy) return stoppedBy === "SIGINT" ? 130 : 143;
      return 1;
    } finally {
      Deno.removeSignalListener("SIGINT", onInt);
      Deno.removeSignalListener("SIGTERM", onTerm);
    }
  },
};

async function detach(
  root: string,
  plan: string | undefined,
  port: string | undefined,
  force: boolean,
  out: (l: string) => void,
) {
  const paths = workspacePaths(root);
  await Deno.mkdir(paths.runtime, { recursive: true });
  const logPath = paths.orchestratorLog;
  const args = ["run", "-A", Deno.mainModule, "--root", root, "run"];
  if (plan) args.push(resolve(root, plan));
  if (port) args.push("--port", port);
  if (force) args.push("--force");
  const previous = await readRunState(paths);
  const before = previous?.started_at ?? 0;
  const logStart = await Deno.stat(logPath).then((st) => st.size, () => 0);
  // `exec` keeps the pid and writes straight to the log: nothing flows through this process.
  // Deno.Command, not dax: the background run is detached into its own session and outlives
  // this process, which dax cannot do.
  const child = new Deno.Command("sh", {
    args: ["-c", 'exec "$0" "$@" >>"$SERVICE_RUN_LOG" 2>&1 </dev/null', Deno.execPath(), ...args],
    env: { SERVICE_RUN_LOG: logPath, NO_COLOR: "1" },
    detached: true,
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 100; i++) {
    const state = await readRunState(paths);
    if (
      state && state.status === "running" && state.started_at >= before && state.pid === child.pid
    ) {
      // The same run id again: the background process resumed the unfinished run.
      const how = previous?.run_id === state.run_id ? "resumed" : "started";
      out(`run ${state.run_id} ${how} in the background (pid ${child.pid}); log ${logPath}`);
      out(
        `board: ${state.url}/dashboard/review-board?run=${state.run_id} · \`service status\` · \`service stop\``,
      );
      // Warnings it printed while starting (a dependency the worktrees lack …) reach the user.
      for (const line of warningsOf(await logSince(logPath, logStart))) out(printable(line));
      child.unref();
      return 0;
    }
    const done = await Promise.race([
      child.status,
      new Promise((r) => setTimeout(() => r(undefined), 100)),
    ]);
    if (done) {
      const code = (done as Deno.CommandStatus).code;
      // Exit 0 at once: nothing was left to do, which is what it says (exit 0, as in the foreground).
      if (code === 0) {
        for (const line of await logSince(logPath, logStart)) out(printable(line));
        return 0;
      }
      out(`the background run exited at once (code ${code}); see ${logPath}`);
      // What it said (a ContainerError and its fix, a bad plan …), not only where to look.
      for (const line of await logSince(logPath, logStart)) out(`  ${printable(line)}`);
      return 1;
    }
  }
  child.unref();
  out(`the background run (pid ${child.pid}) has not registered yet; see ${logPath}`);
  return 0;
}

/** The `warning:` lines of a run's start, each with its `fix:` line (pure). */
export function warningsOf(lines: readonly string[]): string[] {
  return lines.filter((line, i) =>
    line.startsWith("warning: ") ||
    (line.startsWith("  fix: ") && lines[i - 1]?.startsWith("warning: "))
  );
}

/** The last lines `logPath` got after its first `offset` bytes (at most 20). */
async function logSince(logPath: string, offset: number): Promise<string[]> {
  try {
    const bytes = await Deno.readFile(logPath);
    return new TextDecoder().decode(bytes.subarray(offset)).split("\n").filter((l) => l.trim())
      .slice(-20);
  } catch {
    return [];
  }
}
