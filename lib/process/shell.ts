/**
 * Run a literal shell command (`sh -c <command>`) with a timeout and an AbortSignal, in its own
 * process group so a timeout kills the whole tree (test runners spawn children), keeping only
 * the tail of its output.
 */
import { concatBytes } from "../util/bytes.ts";

/** Exit code reported for a command killed by its timeout (spec §7.4). */
export const TIMEOUT_EXIT = 124;

/** Options of {@link runShell}. */
export interface ShellOptions {
  cwd: string;
  /** Time limit in milliseconds (default 10 minutes). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Extra environment variables on top of the inherited ones. */
  env?: Record<string, string>;
  /** Characters of combined output kept (default 4000). */
  tailChars?: number;
  /** Grace between SIGTERM and SIGKILL of the group (default 2000 ms). */
  graceMs?: number;
  /** Keep up to this many bytes of stdout and stderr, in arrival order, in `output`. */
  captureBytes?: number;
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

let setsidAvailable: boolean | undefined;

function hasSetsid(): boolean {
  if (setsidAvailable === undefined) {
    setsidAvailable = ["/usr/bin/setsid", "/bin/setsid"].some((p) => {
      try {
        return Deno.statSync(p).isFile;
      } catch {
        return false;
      }
    });
  }
  return setsidAvailable;
}

/** Run `sh -c command` in `options.cwd`; a non-zero exit is reported, not thrown. */
export async function runShell(command: string, options: ShellOptions): Promise<ShellResult> {
  const started = performance.now();
  const tailChars = options.tailChars ?? 4000;
  const grouped = Deno.build.os !== "windows" && hasSetsid();
  const argv = grouped ? ["setsid", "sh", "-c", command] : ["sh", "-c", command];
  // Deno.Command, not dax: gates and test commands spawn children, and a timeout must signal the
  // whole group (dax signals only the direct child).
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let tail = "";
  const limit = options.captureBytes ?? 0;
  const captured: Uint8Array[] = [];
  let capturedBytes = 0;
  let truncated = false;
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      if (limit > 0) {
        const room = limit - capturedBytes;
        if (chunk.length > room) truncated = true;
        if (room > 0) {
          const kept = chunk.subarray(0, room);
          captured.push(kept.slice());
          capturedBytes += kept.length;
        }
      }
      tail = (tail + decoder.decode(chunk, { stream: true })).slice(-tailChars);
    }
  };
  let timedOut = false;
  let aborted = false;
  let killTimer: ReturnType<typeof setTimeout> | undefined;
  const kill = (sig: Deno.Signal) => {
    try {
      if (grouped) Deno.kill(-child.pid, sig);
      else child.kill(sig);
    } catch {
      // already gone
    }
  };
  const stop = () => {
    kill("SIGTERM");
    killTimer = setTimeout(() => kill("SIGKILL"), options.graceMs ?? 2000);
  };
  const timer = setTimeout(() => {
    timedOut = true;
    stop();
  }, options.timeoutMs ?? 600_000);
  const onAbort = () => {
    aborted = true;
    stop();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    const [status] = await Promise.all([
      child.status,
      collect(child.stdout),
      collect(child.stderr),
    ]);
    return {
      code: timedOut ? TIMEOUT_EXIT : status.code,
      timed_out: timedOut,
      aborted,
      output_tail: tail,
      duration_ms: Math.round(performance.now() - started),
      ...(limit > 0
        ? { output: concatBytes(captured, capturedBytes), output_truncated: truncated }
        : {}),
    };
  } finally {
    clearTimeout(timer);
    clearTimeout(killTimer);
    options.signal?.removeEventListener("abort", onAbort);
    if (timedOut || aborted) kill("SIGKILL"); // stragglers that ignored SIGTERM
  }
}
