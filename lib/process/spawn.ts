/**
 * The one way the service runs a program it must be able to stop. {@link spawnProcess} starts an
 * argv through a {@link Launcher} (by default the host's: its own process group), streams its
 * output — appended to a log file, as chunks, as lines — keeps its last lines for
 * `lastErrorLine`, and ends it whole (`end(reason)`: SIGTERM, a grace, SIGKILL of everything it
 * started) at its timeout, when its AbortSignal aborts, or when asked. When the program exits by
 * itself the rest of its tree ends too, so nothing it started outlives it or keeps its output
 * open; a descendant that escaped every way of finding it stops being read after a short drain.
 */
import { lastErrorLine } from "../util/last_error_line.ts";
import { hostLauncher, type Launched, type Launcher } from "./launcher.ts";
import { lineSplitter } from "./_line_splitter.ts";
import { PipeReader } from "./pipe_reader.ts";
import { type LogSink, openCappedLog } from "./capped_log.ts";

/** Which output stream a chunk or line came from. */
export type OutputStream = "stdout" | "stderr";

/** Options of {@link spawnProcess}. */
export interface SpawnOptions {
  /** Working directory (default: this process's). */
  cwd?: string;
  /** Variables on top of the inherited ones (the only ones with `clearEnv`). */
  env?: Record<string, string>;
  /** Start from an empty environment: only `env` (and the tree markers) is passed. */
  clearEnv?: boolean;
  /** End it with reason `"timeout"` after this many milliseconds (default: no limit). */
  timeoutMs?: number;
  /** End it with reason `"abort"` when this signal aborts. */
  signal?: AbortSignal;
  /** Time between SIGTERM and SIGKILL when it is ended (default 2000 ms). */
  graceMs?: number;
  /** Append stdout and stderr, in arrival order, to this file (created when missing). */
  logPath?: string;
  /**
   * The cap of that file in all (default 100 MiB): past it the log keeps its beginning and the
   * program's last output (lib/process/capped_log.ts).
   */
  logMaxBytes?: number;
  /** Receives each output chunk as it arrives. */
  onOutput?: (chunk: Uint8Array, stream: OutputStream) => void;
  /**
   * Receives each output line as it completes, without its line break (`\n`, `\r\n` or a lone
   * `\r`); an unterminated last line arrives when its stream ends.
   */
  onLine?: (line: string, stream: OutputStream) => void;
  /** Lines of combined output kept for `tail` and `lastErrorLine` (default 40). */
  tailLines?: number;
  /** How the program is started and ended (default {@link hostLauncher}). */
  launcher?: Launcher;
}

/** How a spawned program ended. */
export interface ProcessStatus {
  /** Exit code 0 and no signal. */
  success: boolean;
  /** The exit code (128 + N when signal N killed it). */
  code: number;
  /** The signal that killed the program itself, if one did. */
  signal: Deno.Signal | null;
  /** Ended by its `timeoutMs` (or by `end("timeout")`). */
  timedOut: boolean;
  /** The reason given to `end()` while it ran (`"timeout"`, `"abort"`, or the caller's). */
  endedBy: string | null;
  /** SIGKILL was needed: something of its tree outlived SIGTERM and the grace. */
  killed: boolean;
  /** From the spawn until it and its output were done. */
  durationMs: number;
}

/** A running (or ended) program. */
export interface ProcessHandle extends AsyncDisposable {
  /** Process id of the started host process (the leader of its group). */
  readonly pid: number;
  /** Epoch milliseconds of the spawn. */
  readonly startedAt: number;
  /** True until the program itself has exited. */
  readonly alive: boolean;
  /** Bytes of output read so far. */
  readonly outputBytes: number;
  /** Epoch milliseconds of the last output, null before any. */
  readonly lastOutputAt: number | null;
  /** The last lines of combined output, oldest first. */
  readonly tail: readonly string[];
  /** The line of {@link tail} that says what went wrong (lib/util/last_error_line.ts). */
  readonly lastErrorLine: string | undefined;
  /** Resolves once the program and its tree have ended and its output has been read. */
  readonly status: Promise<ProcessStatus>;
  /**
   * End it whole, remembering `reason` if it still runs: SIGTERM to its tree, up to `graceMs`
   * (default the spawn's), then SIGKILL. Asked again with `graceMs` 0 while it ends, the SIGKILL
   * is sent at once. Resolves its status.
   */
  end(reason: string, graceMs?: number): Promise<ProcessStatus>;
}

/** Time given to the output pipes to drain once the tree has ended. */
const DRAIN_MS = 500;

/**
 * Start `argv` (no shell) and return its handle at once; throws when it cannot start (a missing
 * program is `Deno.errors.NotFound`). A non-zero exit is reported in `status`, not thrown.
 */
export function spawnProcess(argv: readonly string[], options: SpawnOptions = {}): ProcessHandle {
  const graceMs = options.graceMs ?? 2000;
  // Opened before the spawn: a log that cannot be written must not leave a program running.
  const log = options.logPath === undefined
    ? undefined
    : openCappedLog(options.logPath, options.logMaxBytes);
  let launched: Launched;
  try {
    const { cwd, env, clearEnv } = options;
    launched = (options.launcher ?? hostLauncher).launch(argv, { cwd, env, clearEnv });
  } catch (e) {
    log?.close().catch(() => {}); // nothing was written: it only closes the file
    throw e;
  }
  const { child } = launched;
  const startedAt = Date.now();
  const started = performance.now();
  const output = readOutput(launched.output ?? child, log, options);
  let alive = true;
  let endedBy: string | null = null;
  let killed = false;

  let ending: Promise<void> | undefined;
  const endAll = (grace: number) =>
    ending ??= endTree(launched, output, grace).then((k) => {
      if (k) killed = true;
    });

  let forced = false;
  const end = (reason: string, grace = graceMs): Promise<ProcessStatus> => {
    if (alive) {
      endedBy ??= reason;
      // Asked again without a grace while it ends (a second Ctrl-C): SIGKILL now, not later.
      if (ending && grace === 0 && !forced) {
        forced = killed = true; // it still runs: what ends it now is the SIGKILL
        launched.end(0, false).catch(() => {});
      }
      endAll(grace);
    }
    return status;
  };
  const timer = options.timeoutMs === undefined
    ? undefined
    : setTimeout(() => end("timeout"), options.timeoutMs);
  const onAbort = () => end("abort");
  options.signal?.addEventListener("abort", onAbort, { once: true });

  const status = (async (): Promise<ProcessStatus> => {
    try {
      const exit = await (launched.exited ?? child.status);
      alive = false;
      clearTimeout(timer);
      await endAll(graceMs); // what it started ends with it
      try {
        await output.reading;
      } finally {
        await launched.finish?.().catch(() => {}); // before the status says it is over
      }
      return {
        success: exit.success,
        code: exit.code,
        signal: exit.signal,
        timedOut: endedBy === "timeout",
        endedBy,
        killed,
        durationMs: Math.round(performance.now() - started),
      };
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      await output.logWrites.catch(() => {});
      await log?.close().catch(() => {}); // a full disk already surfaced through the reads
    }
  })();
  if (options.signal?.aborted) onAbort();

  return {
    pid: child.pid,
    startedAt,
    get alive() {
      return alive;
    },
    get outputBytes() {
      return output.bytes;
    },
    get lastOutputAt() {
      return output.lastAt;
    },
    get tail() {
      return [...output.tail];
    },
    get lastErrorLine() {
      return lastErrorLine(output.tail);
    },
    status,
    end,
    async [Symbol.asyncDispose]() {
      await end("dispose", 0);
    },
  };
}

/** What is read of a program's output so far, and the reads themselves. */
interface Output {
  /** The last lines of combined output, oldest first. */
  tail: string[];
  bytes: number;
  lastAt: number | null;
  readers: PipeReader[];
  /** Settles once both streams are read to their end (or cancelled). */
  reading: Promise<unknown>;
  /** The log file's writes, one at a time in arrival order. */
  logWrites: Promise<void>;
}

/** Read `child`'s stdout and stderr: to the log, to the callbacks, into the tail. */
function readOutput(
  child: { stdout: ReadableStream<Uint8Array>; stderr: ReadableStream<Uint8Array> },
  log: LogSink | undefined,
  options: SpawnOptions,
): Output {
  const tailLines = options.tailLines ?? 40;
  const output: Output = {
    tail: [],
    bytes: 0,
    lastAt: null,
    // PipeReader: a default reader leaves a 64 KiB buffer per read behind until a collection.
    readers: [new PipeReader(child.stdout), new PipeReader(child.stderr)],
    reading: Promise.resolve(),
    logWrites: Promise.resolve(),
  };
  const read = async (reader: PipeReader, stream: OutputStream) => {
    const lines = lineSplitter((line) => {
      output.tail.push(line);
      if (output.tail.length > tailLines) output.tail.shift();
      options.onLine?.(line, stream);
    });
    const decoder = new TextDecoder();
    for (let chunk = await reader.read(); chunk; chunk = await reader.read()) {
      output.bytes += chunk.length;
      output.lastAt = Date.now();
      // One write at a time, in arrival order: stdout and stderr share the file.
      if (log) await (output.logWrites = output.logWrites.then(() => log.write(chunk)));
      options.onOutput?.(chunk, stream);
      lines.push(decoder.decode(chunk, { stream: true }));
    }
    lines.push(decoder.decode());
    lines.flush();
  };
  output.reading = Promise.all([
    read(output.readers[0], "stdout"),
    read(output.readers[1], "stderr"),
  ]);
  output.reading.catch(() => {}); // a failed read (the log's disk full) surfaces through `status`
  return output;
}

/**
 * End the tree, give the pipes a moment to drain, then stop reading: a descendant that escaped
 * every way of finding it must not keep the caller waiting. True when SIGKILL was needed.
 */
async function endTree(launched: Launched, output: Output, grace: number): Promise<boolean> {
  let killed = await launched.end(grace, false);
  let drained = await settlesWithin(output.reading, DRAIN_MS);
  if (!drained) {
    if (await launched.end(0, true)) killed = true;
    drained = await settlesWithin(output.reading, DRAIN_MS);
  }
  if (!drained) { for (const r of output.readers) r.cancel().catch(() => {}); }
  return killed;
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
