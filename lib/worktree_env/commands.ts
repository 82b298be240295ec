/**
 * A worktree's `setup` and `teardown` commands (DESIGN.md §13): literal shell commands run one
 * after another in the worktree through the one way the service runs a command
 * (lib/process/shell.ts: a time limit, the whole process tree ended, the last lines kept), with
 * the environment given (the agent's, with the leased ports) and nothing else. Their output goes
 * to the session log under a header per command, so `service debug` and the board's "What
 * happened" show what ran and what it said.
 */
import type { Launcher } from "../process/launcher.ts";
import { runShell } from "../process/shell.ts";
import { lastErrorLine } from "../util/last_error_line.ts";

/** One command as it ran (the `setup` items of `task_worktree_prepared`). */
export interface CommandRun {
  command: string;
  /** 124 when the time limit ended it. */
  exit_code: number;
  ms: number;
}

/** The command that failed and the line that says why. */
export interface CommandFailure {
  command: string;
  /** The command's last error line, or how it ended ("timed out after 300 s", "exit 2"). */
  line: string;
}

/** What {@link runEnvCommands} did. */
export interface CommandsOutcome {
  runs: CommandRun[];
  /** The first failure; absent when every command exited 0. */
  failure?: CommandFailure;
}

/** Options of {@link runEnvCommands}. */
export interface EnvCommandsOptions {
  /** `setup` or `teardown`: names the phase in the log's headers. */
  phase: "setup" | "teardown";
  cwd: string;
  /** The whole environment of the commands (nothing else is inherited). */
  env: Record<string, string>;
  /** The session log the output is appended to. */
  logPath: string;
  /** Time limit of all the commands together (ms). */
  timeoutMs: number;
  /** Stop at the first failure (setup) or run every command (teardown). */
  stopOnFailure: boolean;
  signal?: AbortSignal;
  /** Where the commands run (default: host processes; a task's phase-1 container). */
  launcher?: Launcher;
}

async function logLine(path: string, line: string): Promise<void> {
  await Deno.writeTextFile(path, line + "\n", { append: true, create: true });
}

/** Run `commands` in order; never throws for a command that fails. */
export async function runEnvCommands(
  commands: readonly string[],
  options: EnvCommandsOptions,
): Promise<CommandsOutcome> {
  const runs: CommandRun[] = [];
  let failure: CommandFailure | undefined;
  const deadline = performance.now() + options.timeoutMs;
  for (const [i, command] of commands.entries()) {
    const left = Math.max(0, Math.round(deadline - performance.now()));
    await logLine(
      options.logPath,
      `──── service: worktree ${options.phase} ${i + 1}/${commands.length}: ${command}`,
    );
    const r = left === 0
      ? { code: 124, timed_out: true, output_tail: "", duration_ms: 0 }
      : await runShell(command, {
        cwd: options.cwd,
        env: options.env,
        clearEnv: true,
        timeoutMs: left,
        signal: options.signal,
        logPath: options.logPath,
        launcher: options.launcher,
      });
    runs.push({ command, exit_code: r.code, ms: r.duration_ms });
    const limitS = Math.round(options.timeoutMs / 1000);
    const ended = r.timed_out
      ? `timed out (setup_timeout_s: ${limitS} s for the whole ${options.phase})`
      : `exit ${r.code}`;
    await logLine(
      options.logPath,
      `──── service: worktree ${options.phase} ${i + 1}/${commands.length} ${
        r.code === 0 ? "passed" : "FAILED"
      }: ${ended} after ${r.duration_ms} ms`,
    );
    if (r.code === 0) continue;
    failure ??= {
      command,
      line: r.timed_out
        ? ended
        : lastErrorLine(r.output_tail.split(/\r?\n|\r/)) ?? `exit ${r.code} without output`,
    };
    if (options.stopOnFailure) break;
  }
  return { runs, ...(failure ? { failure } : {}) };
}
