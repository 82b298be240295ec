/**
 * Running a catalog entry's `install_command` (spec §2.2): as an argv, never through a shell, in a
 * fresh temporary working directory, with only the allow-listed environment (DESIGN.md §7), under
 * a timeout that ends the whole process tree, its output streamed as it comes — as a host
 * process, or in a throwaway container where lib/catalog/install_place.ts says.
 */
import { BASE_ALLOWED_ENV } from "../agents/env.ts";
import { pidNamespaceLauncher, pidNamespacePrefix } from "../process/pid_namespace.ts";
import { runArgv, TIMEOUT_EXIT } from "../process/shell.ts";
import { installContainer, type InstallPlace } from "./install_place.ts";

/** Default time limit of an install command. */
const INSTALL_TIMEOUT_MS = 10 * 60 * 1000;

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
  /** Where it runs (default: a host process). */
  place?: InstallPlace;
}

/**
 * Run `argv` in the sandbox (lib/process/shell.ts's runner: at the limit, or on Ctrl-C, the whole
 * tree ends — descendants that left its process group included — and reading stops); a missing
 * program is exit 127, as a shell would say. `onLine` gets stdout and stderr lines as they come.
 */
export async function runInstallCommand(
  argv: string[],
  options: InstallRunOptions,
): Promise<InstallRun> {
  const cwd = await Deno.makeTempDir({ prefix: "service-mcp-install-" });
  const tail: string[] = [];
  const onLine = (line: string) => {
    tail.push(line);
    if (tail.length > TAIL_LINES) tail.shift();
    options.onLine?.(line);
  };
  // Its own process group does not get the terminal's Ctrl-C: pass it on, then report it.
  const interrupt = new AbortController();
  const onSignal = () => {
    if (interrupt.signal.aborted) return;
    onLine("interrupted: stopping the install command");
    interrupt.abort();
  };
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  for (const s of signals) Deno.addSignalListener(s, onSignal);
  const timeoutMs = options.timeoutMs ?? INSTALL_TIMEOUT_MS;
  try {
    const env = scrubbedEnvironment(options.processEnv);
    const boxed = options.place?.kind === "container"
      ? await installContainer(options.place.iso, cwd, { env, processEnv: options.processEnv })
      : undefined;
    // On this machine, a PID namespace of its own where one can be made: a descendant that left
    // its group, cleared its environment and closed its output still ends with it.
    const namespace = boxed ? undefined : await pidNamespacePrefix();
    const run = await runArgv(argv, {
      cwd,
      clearEnv: true,
      env: boxed ? boxed.env : env,
      launcher: boxed?.launcher ?? (namespace ? pidNamespaceLauncher(namespace) : undefined),
      timeoutMs,
      graceMs: KILL_GRACE_MS,
      signal: interrupt.signal,
      onLine,
    });
    if (run.timed_out) {
      onLine(
        `timed out after ${Math.round(timeoutMs / 1000)} s: the install command and everything ` +
          "it started were stopped",
      );
    }
    return {
      code: run.timed_out ? TIMEOUT_EXIT : run.aborted ? 130 : run.code,
      timedOut: run.timed_out,
      interrupted: run.aborted,
      tail,
      durationMs: run.duration_ms,
      cwd,
    };
  } finally {
    for (const s of signals) Deno.removeSignalListener(s, onSignal);
    await Deno.remove(cwd, { recursive: true }).catch(() => {});
  }
}
