/** `service stop`: end the current run cleanly. */
import { parseArgs } from "node:util";
import { CliError, type Command } from "../command.ts";
import { readRunState, stoppedOutcome, writeRunState } from "../../runs/run_state.ts";
import { processAlive } from "../../util/process_alive.ts";
import { reapPidFiles } from "../../agents/pid_files.ts";
import { workspacePaths } from "../../workspace.ts";

/** `service stop`: stop the current run: agents get SIGTERM, then SIGKILL; work is kept. */
export const stopCommand: Command = {
  name: "stop",
  summary: "stop the current run: agents get SIGTERM, then SIGKILL; work is kept",
  help: `Usage: service stop [--timeout S] [--root DIR]

Signals the run's orchestrator (SIGTERM). It gives every agent SIGTERM, waits the grace (30 s,
SERVICE_KILL_GRACE_S), sends SIGKILL to what is left, commits the agents' partial work to their
branches, removes the PID files and records run_completed with status "stopped"; \`service run\`
resumes the run later. When the orchestrator is already gone, stop ends the agents it left
behind and removes their stale PID files (.sdd/runtime/pids/*.json).

Options:
  --timeout S  how long to wait for the orchestrator to finish (default 45)`,
  async run(args, ctx) {
    const { values } = parseArgs({ args, options: { timeout: { type: "string", default: "45" } } });
    const seconds = Number(values.timeout);
    if (!/^\d+(\.\d+)?$/.test(values.timeout!) || !Number.isFinite(seconds)) {
      throw new CliError(
        `--timeout ${values.timeout} is not a number of seconds`,
        1,
        "give the seconds to wait, for example `service stop --timeout 60`",
      );
    }
    const paths = workspacePaths(ctx.root);
    const state = await readRunState(paths);
    if (state && state.status === "running" && processAlive(state.pid)) {
      ctx.stdout(`stopping run ${state.run_id} (pid ${state.pid})…`);
      Deno.kill(state.pid, "SIGTERM");
      const deadline = Date.now() + seconds * 1000;
      while (processAlive(state.pid) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
      }
      if (processAlive(state.pid)) {
        ctx.stderr(
          `run ${state.run_id} is still stopping (pid ${state.pid}); run \`service stop\` again to wait`,
        );
        return 1;
      }
      const ended = await readRunState(paths);
      ctx.stdout(
        ended?.run_id === state.run_id && ended.status !== "running" && ended.status !== "stopped"
          ? `run ${state.run_id} ended (${ended.status}) as it was stopped`
          : `run ${state.run_id} ${stoppedOutcome(ended?.run_id === state.run_id ? ended : state)}`,
      );
    }
    let survivors = 0;
    const stale = (await reapPidFiles(paths, 2000, () => survivors++)).length;
    if (survivors > 0) {
      ctx.stdout(`ended ${survivors} agent(s) left by an orchestrator that is gone`);
    }
    if (stale > 0) {
      ctx.stdout(`removed ${stale} stale PID file(s)`);
    }
    // Only an orchestrator that ended without its last word (killed) leaves "running" behind;
    // one that ended cleanly wrote its final state, which must not be overwritten.
    const last = await readRunState(paths);
    if (last && last.status === "running" && !processAlive(last.pid)) {
      await writeRunState(paths, { ...last, status: "stopped" });
    }
    if ((!state || state.status !== "running") && stale === 0) ctx.stdout("no run in progress");
    return 0;
  },
};
