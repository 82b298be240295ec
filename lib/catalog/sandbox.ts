/**
 * Running a catalog entry's `install_command` (spec §2.2): as an argv, never through a shell, in a
 * fresh temporary working directory, with only the allow-listed environment (DESIGN.md §7), under
 * a timeout that ends the whole process tree, its output streamed as it comes.
 */
import { BASE_ALLOWED_ENV } from "../agents/env.ts";

/** Default time limit of an install command. */
export const INSTALL_TIMEOUT_MS = 10 * 60 * 1000;

/** Grace between SIGTERM and SIGKILL of a timed-out install. */
const KILL_GRACE_MS = 5_000;

/** Lines of output kept for the failure message. */
const TAIL_LINES = 40;

/** The environment an install (and a health check) gets: DESIGN.md §7's allow-list, no secrets. */
export function scrubbedEnvironment(processEnv: Record<string, string>): Record<string, string> {
  const allowed = new Set<string>(BASE_ALLOWED_ENV);
  return Object.fromEntries(
    Object.entries(processEnv).filter(([k]) => allowed.has(k) || k.startsWith("LC_")),
  );
}

/** How an install command ended. */
export interface InstallRun {
  code: number;
  timedOut: boolean;
  /** Ended by Ctrl-C or SIGTERM to the service (the install runs in its own process group). */
  interrupted: boolean;
  /** The last lines of its combined output. */
  tail: string[];
  durationMs: number;
  /** The temporary directory it ran in (removed afterwards). */
  cwd: string;
}

/** Options of {@link runInstallCommand}. */
export interface InstallRunOptions {
  processEnv: Record<string, string>;
  timeoutMs?: number;
  /** Receives each output line as it arrives. */
  onLine?: (line: string) => void;
}

async function pump(
  stream: ReadableStream<Uint8Array<ArrayBuffer>>,
  onLine: (line: string) => void,
): Promise<void> {
  let rest = "";
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (rest + chunk).split(/\r?\n|\r/);
    rest = parts.pop() ?? "";
    for (const p of parts) onLine(p);
  }
  if (rest) onLine(rest);
}

/** Run `argv` in the sandbox; a missing program is exit 127, as a shell would say. */
export async function runInstallCommand(
  argv: string[],
  options: InstallRunOptions,
): Promise<InstallRun> {
  const cwd = await Deno.makeTempDir({ prefix: "service-mcp-install-" });
  const started = performance.now();
  const tail: string[] = [];
  const onLine = (line: string) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    options.onLine?.(line);
  };
  try {
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(argv[0], {
        args: argv.slice(1),
        cwd,
        clearEnv: true,
        env: scrubbedEnvironment(options.processEnv),
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        detached: true, // its own process group: the timeout ends the whole tree
      }).spawn();
    } catch (e) {
      const notFound = e instanceof Deno.errors.NotFound;
      onLine(
        notFound ? `${argv[0]}: command not found on PATH` : `${argv[0]}: ${(e as Error).message}`,
      );
      return {
        code: notFound ? 127 : 126,
        timedOut: false,
        interrupted: false,
        tail,
        durationMs: performance.now() - started,
        cwd,
      };
    }
    let timedOut = false;
    const kill = (signal: Deno.Signal) => {
      try {
        Deno.kill(-child.pid, signal);
      } catch { /* already gone */ }
    };
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      onLine(
        `timed out after ${
          Math.round((options.timeoutMs ?? INSTALL_TIMEOUT_MS) / 1000)
        } s: stopping it`,
      );
      kill("SIGTERM");
      killTimer = setTimeout(() => kill("SIGKILL"), KILL_GRACE_MS);
    }, options.timeoutMs ?? INSTALL_TIMEOUT_MS);
    // Its own process group does not get the terminal's Ctrl-C: pass it on, then report it.
    let interrupted = false;
    const interrupt = () => {
      interrupted = true;
      onLine("interrupted: stopping the install command");
      kill("SIGTERM");
      killTimer ??= setTimeout(() => kill("SIGKILL"), KILL_GRACE_MS);
    };
    const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
    for (const s of signals) Deno.addSignalListener(s, interrupt);
    let status: Deno.CommandStatus;
    try {
      [status] = await Promise.all([
        child.status,
        pump(child.stdout, onLine),
        pump(child.stderr, onLine),
      ]);
    } finally {
      for (const s of signals) Deno.removeSignalListener(s, interrupt);
      clearTimeout(timer);
      clearTimeout(killTimer);
    }
    return {
      code: timedOut ? 124 : interrupted ? 130 : status.code,
      timedOut,
      interrupted,
      tail,
      durationMs: performance.now() - started,
      cwd,
    };
  } finally {
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
}
