/**
 * Agent process control (spec §7.3, §8): an agent runs through lib/process/spawn.ts — its own
 * process group, its stdout and stderr appended to its log file, ended whole by `end(reason)`
 * (SIGTERM, a 30 s grace, SIGKILL of its tree) — and an agent that dies within 2 s is a
 * `SpawnError`.
 */
import { SpawnError } from "./errors.ts";
import { readFileEnd } from "../util/file_end.ts";
import { agentExitCode } from "./exit_status.ts";
import type { Launcher } from "../process/launcher.ts";
import { type ProcessHandle, type ProcessStatus, spawnProcess } from "../process/spawn.ts";

/** SIGTERM to SIGKILL grace (spec §8). */
export const KILL_GRACE_MS = 30_000;
/** Fast-exit probe window (spec §8). */
export const FAST_EXIT_WINDOW_MS = 2_000;

/** Options of `spawnAgent`. */
export interface SpawnAgentOptions {
  /** Executable (absolute path from preflight). */
  command: string;
  args: string[];
  cwd: string;
  /** The complete environment (see `agentEnvironment`); nothing else is inherited. */
  env: Record<string, string>;
  /** Log file; output is appended. */
  logPath: string;
  /** The log's cap (bytes; default lib/process/capped_log.ts's). */
  logMaxBytes?: number;
  /** SIGTERM to SIGKILL grace when it is ended; default 30 s (spec §8). */
  graceMs?: number;
  /** Where it runs (default: a host process; lib/container/launcher.ts: a container). */
  launcher?: Launcher;
  /** Called with each whole line it writes (stdout and stderr). */
  onLine?: (line: string) => void;
}

/** A running agent: its process handle and the log its output goes to. */
export interface AgentProcess extends ProcessHandle {
  logPath: string;
}

/**
 * Spawn an agent in its own process group (or container, through `launcher`) with output
 * appended to `logPath`.
 */
export function spawnAgent(options: SpawnAgentOptions): AgentProcess {
  const proc = spawnProcess([options.command, ...options.args], {
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    logPath: options.logPath,
    logMaxBytes: options.logMaxBytes,
    graceMs: options.graceMs ?? KILL_GRACE_MS,
    launcher: options.launcher,
    onLine: options.onLine,
  });
  return Object.assign(proc, { logPath: options.logPath });
}

/** Bytes read from the end of a log for {@link logTail}: a log may hold up to its cap. */
const TAIL_READ_BYTES = 256 * 1024;

/** The last `n` lines of a log file (of its last 256 KiB; none when unreadable). */
export async function logTail(path: string, n = 20): Promise<string[]> {
  try {
    const { text, cut } = await readFileEnd(path, TAIL_READ_BYTES);
    const lines = text.split("\n");
    if (cut) lines.shift(); // the first line is cut
    if (lines.at(-1) === "") lines.pop();
    return lines.slice(-n);
  } catch {
    return [];
  }
}

/** Options of `probeFastExit`. */
export interface FastExitOptions {
  /** Probe window; default 2 s (spec §8). */
  windowMs?: number;
  /** Treat a clean exit (code 0) inside the window as success; default true. */
  allowSuccess?: boolean;
}

/**
 * Wait up to the probe window. An agent that ends inside it with a failure throws
 * `SpawnError: agent exited within 2s` with the log path and its last lines; an agent still
 * running resolves `undefined`; a clean early exit resolves its status.
 */
export async function probeFastExit(
  proc: AgentProcess,
  options: FastExitOptions = {},
): Promise<ProcessStatus | undefined> {
  const windowMs = options.windowMs ?? FAST_EXIT_WINDOW_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), windowMs)));
  const status = await Promise.race([proc.status, timeout]);
  clearTimeout(timer);
  if (!status) return undefined;
  if (status.success && (options.allowSuccess ?? true)) return status;
  const code = agentExitCode({ code: status.code, signal: status.signal });
  throw new SpawnError({
    message: `agent exited within ${windowMs / 1000}s (exit ${code})`,
    logPath: proc.logPath,
    logTail: await logTail(proc.logPath),
    exitCode: code,
  });
}
