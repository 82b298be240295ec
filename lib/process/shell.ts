/**
 * Run a command with a timeout and an AbortSignal, keeping only the tail of its output:
 * {@link runShell} a literal shell command (`sh -c <command>`), {@link runArgv} an argv without a
 * shell. The command leads its own process group, and when it ends — by itself, by its timeout
 * or by the signal — the rest of its tree ends too (lib/process/tree.ts: its group, the processes
 * carrying its marker variable, the holders of its output pipes), so nothing it started outlives
 * it and a descendant holding its output cannot keep the call waiting.
 */
import { concatBytes } from "../util/bytes.ts";
import {
  endTree,
  inheritedTreeMarkers,
  newTreeMarker,
  outputPipes,
  type ProcessTree,
} from "./tree.ts";

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
  /** Receives the output as it arrives, decoded, per stream. */
  onOutput?: (text: string, stream: "stdout" | "stderr") => void;
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

let setsidPath: string | null | undefined;

/** The `setsid` program (util-linux), when installed: it starts the command in its own group. */
function findSetsid(): string | null {
  if (setsidPath === undefined) {
    setsidPath = Deno.build.os === "windows"
      ? null
      : ["/usr/bin/setsid", "/bin/setsid"].find((p) => {
        try {
          return Deno.statSync(p).isFile;
        } catch {
          return false;
        }
      }) ?? null;
  }
  return setsidPath;
}

/** Time given to the output pipes to drain once the tree has ended. */
const DRAIN_MS = 500;

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
  const graceMs = options.graceMs ?? 2000;
  const setsid = findSetsid();
  const grouped = setsid !== null;
  const marker = newTreeMarker();
  let tail = "";
  const remember = (text: string) => {
    tail = (tail + text).slice(-tailChars);
  };
  // Deno.Command, not dax: gates and test commands spawn children, and a timeout must end the
  // whole tree (dax signals only the direct child).
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(setsid ?? argv[0], {
      args: grouped ? argv : argv.slice(1),
      cwd: options.cwd,
      clearEnv: options.clearEnv,
      env: { ...options.env, ...inheritedTreeMarkers(), [marker]: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (e) {
    const notFound = e instanceof Deno.errors.NotFound;
    const text = `${argv[0]}: ${notFound ? "command not found" : (e as Error).message}\n`;
    options.onOutput?.(text, "stderr");
    remember(text);
    return {
      code: notFound ? 127 : 126,
      timed_out: false,
      aborted: false,
      output_tail: tail,
      duration_ms: Math.round(performance.now() - started),
    };
  }
  const tree: ProcessTree = { pgid: child.pid, marker, pipes: outputPipes(child.pid) };
  const limit = options.captureBytes ?? 0;
  const captured: Uint8Array[] = [];
  let capturedBytes = 0;
  let truncated = false;
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const collect = async (
    reader: ReadableStreamDefaultReader<Uint8Array>,
    name: "stdout" | "stderr",
  ) => {
    const decoder = new TextDecoder();
    while (true) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      if (limit > 0) {
        const room = limit - capturedBytes;
        if (chunk.length > room) truncated = true;
        if (room > 0) {
          const kept = chunk.subarray(0, room);
          captured.push(kept.slice());
          capturedBytes += kept.length;
        }
      }
      const text = decoder.decode(chunk, { stream: true });
      remember(text);
      options.onOutput?.(text, name);
    }
  };
  const reading = Promise.all([collect(readers[0], "stdout"), collect(readers[1], "stderr")]);
  let timedOut = false;
  let aborted = false;
  let ending: Promise<void> | undefined;
  // End the tree, give the pipes a moment to drain, then stop reading: a descendant that escaped
  // every way of finding it must not keep the caller waiting.
  const end = () =>
    ending ??= (async () => {
      if (grouped) await endTree(tree, { graceMs });
      else {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }
      let drained = await settlesWithin(reading, DRAIN_MS);
      if (!drained && grouped) {
        await endTree(tree, { graceMs: 0, withPipes: true });
        drained = await settlesWithin(reading, DRAIN_MS);
      }
      if (!drained) { for (const r of readers) r.cancel().catch(() => {}); }
    })();
  const timer = setTimeout(() => {
    timedOut = true;
    end();
  }, options.timeoutMs ?? 600_000);
  const onAbort = () => {
    aborted = true;
    end();
  };
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  try {
    const status = await child.status;
    clearTimeout(timer);
    await end(); // what it started ends with it
    await reading;
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
    options.signal?.removeEventListener("abort", onAbort);
  }
}

/** Whether `p` settles within `ms`. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<false>((r) => timer = setTimeout(() => r(false), ms));
  try {
    return await Promise.race([p.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}
