/**
 * Run a command to its end with a timeout and an AbortSignal, keeping only the tail of its
 * output: {@link runShell} a literal shell command (`sh -c <command>`), {@link runArgv} an argv
 * without a shell. Both run through {@link spawnProcess}, so when the command ends — by itself,
 * by its timeout or by the signal — the rest of its tree ends too (its group, a descendant that
 * left it, the holders of its output pipes) and nothing it started can keep the call waiting.
 */
import { concatBytes } from "../util/bytes.ts";
import type { Launcher } from "./launcher.ts";
import { type OutputStream, type ProcessHandle, spawnProcess } from "./spawn.ts";

/** Exit code reported for a command killed by its timeout (spec §7.4). */
export const TIMEOUT_EXIT = 124;

/** Options of {@link runShell} and {@link runArgv}. */
export interface ShellOptions {
  cwd: string;
  /** Time limit in milliseconds (default 10 minutes). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Extra environment variables on top of the inherited ones. */
  env?: Record<string, string>;
  /** Start from an empty environment: only `env` (and the tree markers) is passed. */
  clearEnv?: boolean;
  /** Characters of combined output kept (default 4000). */
  tailChars?: number;
  /** Grace between SIGTERM and SIGKILL of the group (default 2000 ms). */
  graceMs?: number;
  /** Keep up to this many bytes of stdout and stderr, in arrival order, in `output`. */
  captureBytes?: number;
  /** Receives each output line as it completes (see {@link spawnProcess}). */
  onLine?: (line: string, stream: OutputStream) => void;
  /** Append stdout and stderr, in arrival order, to this file (see {@link spawnProcess}). */
  logPath?: string;
  /** Where the command runs (default: a host process; lib/container/launcher.ts: a container). */
  launcher?: Launcher;
}

/** How a command ended. */
export interface ShellResult {
  /** Exit code; {@link TIMEOUT_EXIT} on timeout. */
  code: number;
  timed_out: boolean;
  aborted: boolean;
  /** The last `tailChars` characters of stdout and stderr, in arrival order. */
  output_tail: string;
  duration_ms: number;
  /** The captured bytes (only with `captureBytes`). */
  output?: Uint8Array;
  /** True when more than `captureBytes` bytes were written. */
  output_truncated?: boolean;
}

/** Run `sh -c command` in `options.cwd`; a non-zero exit is reported, not thrown. */
export function runShell(command: string, options: ShellOptions): Promise<ShellResult> {
  return runArgv(["sh", "-c", command], options);
}

/**
 * Run `argv` (no shell) in `options.cwd`; a non-zero exit is reported, not thrown, a program that
 * cannot be found is exit 127 (as a shell says).
 */
export async function runArgv(argv: string[], options: ShellOptions): Promise<ShellResult> {
  const started = performance.now();
  const tailChars = options.tailChars ?? 4000;
  let tail = "";
  const remember = (text: string) => {
    tail = (tail + text).slice(-tailChars);
  };
  const decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
  const limit = options.captureBytes ?? 0;
  const captured: Uint8Array[] = [];
  let capturedBytes = 0;
  let truncated = false;
  let proc: ProcessHandle;
  try {
    proc = spawnProcess(argv, {
      cwd: options.cwd,
      clearEnv: options.clearEnv,
      env: options.env,
      timeoutMs: options.timeoutMs ?? 600_000,
      signal: options.signal,
      graceMs: options.graceMs ?? 2000,
      onLine: options.onLine,
      logPath: options.logPath,
      launcher: options.launcher,
      onOutput: (chunk, stream) => {
        if (limit > 0) {
          const room = limit - capturedBytes;
          if (chunk.length > room) truncated = true;
          if (room > 0) {
            const kept = chunk.subarray(0, room);
            captured.push(kept.slice());
            capturedBytes += kept.length;
          }
        }
        remember(decoders[stream].decode(chunk, { stream: true }));
      },
    });
  } catch (e) {
    const notFound = e instanceof Deno.errors.NotFound;
    const text = `${argv[0]}: ${notFound ? "command not found" : (e as Error).message}`;
    options.onLine?.(text, "stderr");
    remember(text + "\n");
    return {
      code: notFound ? 127 : 126,
      timed_out: false,
      aborted: false,
      output_tail: tail,
      duration_ms: Math.round(performance.now() - started),
    };
  }
  const status = await proc.status;
  return {
    code: status.timedOut ? TIMEOUT_EXIT : status.code,
    timed_out: status.timedOut,
    aborted: status.endedBy === "abort",
    output_tail: tail,
    duration_ms: Math.round(performance.now() - started),
    ...(limit > 0
      ? { output: concatBytes(captured, capturedBytes), output_truncated: truncated }
      : {}),
  };
}
