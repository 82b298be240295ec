/**
 * Agent process control (spec §7.3, §8): each agent runs in its own process group
 * (`Deno.Command({ detached: true })`), its stdout and stderr are appended to its log file, the
 * whole tree is signalled through the group (`Deno.kill(-pid, …)`), a timeout is SIGTERM, a
 * 30 s grace, then SIGKILL, and an agent that dies within 2 s is a `SpawnError`.
 * Process groups are a POSIX feature; on Windows only the direct child is signalled.
 */
import { SpawnError } from "./errors.ts";
import { agentExitCode } from "./exit_status.ts";

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
}

/** A running agent. `status` resolves once it has ended and its output is in the log. */
export interface AgentProcess extends AsyncDisposable {
  pid: number;
  logPath: string;
  /** Epoch milliseconds of the spawn. */
  startedAt: number;
  /** Epoch milliseconds of the last output byte, null before any output. */
  lastOutputAt: number | null;
  /** Bytes written to the log by this process. */
  logBytes: number;
  /** True until the process has ended. */
  alive: boolean;
  status: Promise<Deno.CommandStatus>;
}

async function pump(
  stream: ReadableStream<Uint8Array>,
  path: string,
  onChunk: (n: number) => void,
): Promise<void> {
  using file = await Deno.open(path, { append: true, create: true });
  for await (const chunk of stream) {
    let written = 0;
    while (written < chunk.length) written += await file.write(chunk.subarray(written));
    onChunk(chunk.length);
  }
}

/** Spawn an agent in its own process group with output appended to `logPath`. */
export function spawnAgent(options: SpawnAgentOptions): AgentProcess {
  // Deno.Command, not dax: the agent leads its own process group so a timeout or `stop` can
  // signal its whole tree (dax signals only the direct child).
  const child = new Deno.Command(options.command, {
    args: options.args,
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    detached: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const proc: AgentProcess = {
    pid: child.pid,
    logPath: options.logPath,
    startedAt: Date.now(),
    lastOutputAt: null,
    logBytes: 0,
    alive: true,
    status: Promise.resolve(undefined as unknown as Deno.CommandStatus),
    async [Symbol.asyncDispose]() {
      if (proc.alive) await terminateWithGrace(proc, { graceMs: 0 });
      await proc.status;
    },
  };
  const onChunk = (n: number) => {
    proc.logBytes += n;
    proc.lastOutputAt = Date.now();
  };
  const pumps = Promise.all([
    pump(child.stdout, options.logPath, onChunk),
    pump(child.stderr, options.logPath, onChunk),
  ]);
  proc.status = (async () => {
    const status = await child.status;
    proc.alive = false;
    await pumps;
    return status;
  })();
  return proc;
}

/**
 * Send `signal` to the whole process group of `pid` (POSIX) or to `pid` itself (Windows).
 * Returns false when nothing was left to signal.
 */
export function killTree(pid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(Deno.build.os === "windows" ? pid : -pid, signal);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof TypeError) return false;
    if (e instanceof Error && /ESRCH|No such process/i.test(e.message)) return false;
    throw e;
  }
}

/** True while any process of the group `pgid` exists (probed with a harmless SIGCONT). */
export function groupAlive(pgid: number): boolean {
  if (Deno.build.os === "windows") return false;
  return killTree(pgid, "SIGCONT");
}

/** Options of `terminateWithGrace`. */
export interface TerminateOptions {
  /** Wait between SIGTERM and SIGKILL; default 30 s (spec §8). */
  graceMs?: number;
  /** Poll interval while waiting for the group to empty; default 50 ms. */
  pollMs?: number;
}

/** What `terminateWithGrace` did. */
export interface TerminateResult {
  status: Deno.CommandStatus;
  /** True when SIGKILL was needed. */
  killed: boolean;
}

/**
 * SIGTERM to the process group, wait up to the grace for the whole group to end, then SIGKILL
 * the group. Resolves when the agent itself has ended.
 */
export async function terminateWithGrace(
  proc: AgentProcess,
  options: TerminateOptions = {},
): Promise<TerminateResult> {
  const grace = options.graceMs ?? KILL_GRACE_MS;
  const poll = options.pollMs ?? 50;
  killTree(proc.pid, "SIGTERM");
  const deadline = Date.now() + grace;
  while (Date.now() < deadline && (proc.alive || groupAlive(proc.pid))) {
    await new Promise((r) => setTimeout(r, Math.min(poll, Math.max(1, deadline - Date.now()))));
  }
  const killed = groupAlive(proc.pid) && killTree(proc.pid, "SIGKILL");
  return { status: await proc.status, killed };
}

/** The last `n` lines of a log file ("" when unreadable). */
export async function logTail(path: string, n = 20): Promise<string[]> {
  try {
    const lines = (await Deno.readTextFile(path)).split("\n");
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
): Promise<Deno.CommandStatus | undefined> {
  const windowMs = options.windowMs ?? FAST_EXIT_WINDOW_MS;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), windowMs)));
  const status = await Promise.race([proc.status, timeout]);
  clearTimeout(timer);
  if (!status) return undefined;
  if (status.success && (options.allowSuccess ?? true)) return status;
  const code = agentExitCode({ code: status.code, signal: status.signal });
  throw new SpawnError(
    `agent exited within ${windowMs / 1000}s (exit ${code})`,
    proc.logPath,
    await logTail(proc.logPath),
    code,
  );
}
