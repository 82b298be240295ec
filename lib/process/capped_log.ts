/**
 * A session log with a size cap: an agent that writes without end (a loop printing, a binary
 * dumped to its output) must not fill the disk the journal and the task store live on, nor make
 * every reader of its log load gigabytes. Past the cap the log keeps its beginning, a line that
 * says how much was left out, and the last bytes the program wrote — where its final result,
 * its usage line and the reason it failed are. The program's output is still read to its end
 * (it is never blocked on a full pipe), and its lines still reach the callers that scan them.
 */

/** The cap of an agent's log when `agent_log_max_mb` does not set one. */
export const DEFAULT_LOG_MAX_BYTES = 100 * 1024 * 1024;
/** The end of the output a capped log keeps, at most (and at most an eighth of the cap). */
const TAIL_KEEP_BYTES = 1024 * 1024;
/** Room left under the cap for the two lines that say what was left out. */
const MARKER_ROOM = 512;

/** Where output goes: appended, in order, capped. */
export interface LogSink {
  /** Append `chunk` (or keep it for the end, once the log is full). */
  write(chunk: Uint8Array): Promise<void>;
  /** Write what was kept for the end and say how much was left out; then close the file. */
  close(): Promise<void>;
}

/** Open `path` for appending (created when missing), capped at `maxBytes` in all. */
export function openCappedLog(path: string, maxBytes = DEFAULT_LOG_MAX_BYTES): LogSink {
  const file = Deno.openSync(path, { append: true, create: true });
  let size: number;
  try {
    size = file.statSync().size;
  } catch (e) {
    file.close();
    throw e;
  }
  return new CappedLog(file, size, maxBytes);
}

/** The cap's arithmetic, kept apart from the file: what to write now, what to keep for the end. */
export class LogBudget {
  readonly tailKeep: number;
  #room: number;
  #tail: Uint8Array[] = [];
  #tailBytes = 0;
  /** Bytes neither written nor kept (they fell out of the kept end). */
  dropped = 0;
  /** True once the first byte did not fit. */
  full = false;

  constructor(sizeNow: number, maxBytes: number) {
    this.tailKeep = Math.max(0, Math.min(TAIL_KEEP_BYTES, Math.floor(maxBytes / 8)));
    this.#room = Math.max(0, maxBytes - this.tailKeep - MARKER_ROOM - sizeNow);
  }

  /** The part of `chunk` to write now; the rest is kept for the end (or dropped). */
  take(chunk: Uint8Array): Uint8Array {
    const now = chunk.subarray(0, this.#room);
    this.#room -= now.length;
    if (now.length < chunk.length) {
      this.full = true;
      this.#keep(chunk.subarray(now.length));
    }
    return now;
  }

  /** The kept end, oldest first, and the bytes it holds. */
  tail(): { chunks: Uint8Array[]; bytes: number } {
    return { chunks: this.#tail, bytes: this.#tailBytes };
  }

  #keep(bytes: Uint8Array) {
    this.#tail.push(bytes);
    this.#tailBytes += bytes.length;
    while (this.#tailBytes > this.tailKeep) {
      const first = this.#tail[0];
      const over = this.#tailBytes - this.tailKeep;
      if (first.length <= over) {
        this.#tail.shift();
        this.#tailBytes -= first.length;
        this.dropped += first.length;
      } else {
        this.#tail[0] = first.subarray(over);
        this.#tailBytes -= over;
        this.dropped += over;
      }
    }
  }
}

class CappedLog implements LogSink {
  readonly #file: Deno.FsFile;
  readonly #budget: LogBudget;
  readonly #maxBytes: number;
  #marked = false;

  constructor(file: Deno.FsFile, sizeNow: number, maxBytes: number) {
    this.#file = file;
    this.#maxBytes = maxBytes;
    this.#budget = new LogBudget(sizeNow, maxBytes);
  }

  async write(chunk: Uint8Array): Promise<void> {
    const now = this.#budget.take(chunk);
    if (now.length > 0) await writeAll(this.#file, now);
    if (this.#budget.full && !this.#marked) {
      this.#marked = true; // said at once: a reader of the log while it runs knows why it stopped
      await writeAll(this.#file, encode(`\n${capLine(this.#maxBytes, this.#budget.tailKeep)}\n`));
    }
  }

  async close(): Promise<void> {
    try {
      if (!this.#budget.full) return;
      const { chunks, bytes } = this.#budget.tail();
      const dropped = this.#budget.dropped;
      const head = dropped > 0
        ? `──── service: ${dropped} bytes of output left out here; its last ${bytes} bytes follow`
        : `──── service: nothing was left out; the rest of the output follows`;
      await writeAll(this.#file, encode(`${head}\n`));
      for (const chunk of chunks) await writeAll(this.#file, chunk);
    } finally {
      this.#file.close();
    }
  }
}

/** The line a log gets where it reached its cap. */
function capLine(maxBytes: number, tailKeep: number): string {
  return `──── service: this log reached its cap of ${mib(maxBytes)} (agent_log_max_mb); ` +
    `its last ${mib(tailKeep)} will be added when the program ends`;
}

function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return m >= 1
    ? `${Number.isInteger(m) ? m : m.toFixed(1)} MiB`
    : `${Math.ceil(bytes / 1024)} KiB`;
}

const encoder = new TextEncoder();
const encode = (s: string) => encoder.encode(s);

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}
