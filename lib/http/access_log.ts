/**
 * The request log `.sdd/runtime/access.jsonl`: one JSON line per request (ts, method, path,
 * status, ms, principal). Lines are buffered in memory and appended in one write when the
 * buffer fills, when the server's ticker flushes (about every second) and at shutdown. The file
 * is rotated at 10 MiB with one backup (`access.jsonl.1`). It is non-authoritative.
 */
import { join } from "node:path";
import type { MiddlewareHandler } from "hono";
import type { AppContext, AppEnv } from "./context.ts";
import type { WorkspacePaths } from "../workspace.ts";

/** Rotation size (spec §8). */
const ACCESS_LOG_MAX_BYTES = 10 * 1024 * 1024;
const BUFFER_BYTES = 64 * 1024;

/** One access-log line. */
export interface AccessRecord {
  ts: string;
  method: string;
  path: string;
  status: number;
  ms: number;
  principal: string | null;
}

/** `.sdd/runtime/access.jsonl`. */
function accessLogPath(paths: WorkspacePaths): string {
  return paths.accessLog;
}

/** A buffered, rotating append-only log (the access log's records, the server log's lines). */
export class AccessLog {
  readonly path: string;
  readonly #maxBytes: number;
  #buffer: string[] = [];
  #bufferBytes = 0;
  #size: number | undefined;
  #encoder = new TextEncoder();

  constructor(path: string, maxBytes = ACCESS_LOG_MAX_BYTES) {
    this.path = path;
    this.#maxBytes = maxBytes;
  }

  /** Buffer one record; flushes when the buffer is full. */
  record(entry: AccessRecord): void {
    this.append(JSON.stringify(entry));
  }

  /** Buffer one line of text (the server log's lines); flushes when the buffer is full. */
  append(text: string): void {
    const line = text + "\n";
    this.#buffer.push(line);
    this.#bufferBytes += line.length;
    if (this.#bufferBytes >= BUFFER_BYTES) this.flush();
  }

  /** Append the buffered lines now (synchronous: one write, nothing left pending). */
  flush(): void {
    if (this.#buffer.length === 0) return;
    const data = this.#encoder.encode(this.#buffer.join(""));
    this.#buffer = [];
    this.#bufferBytes = 0;
    try {
      if (this.#size === undefined) {
        Deno.mkdirSync(join(this.path, ".."), { recursive: true });
        try {
          this.#size = Deno.statSync(this.path).size;
        } catch {
          this.#size = 0;
        }
      }
      if (this.#size > 0 && this.#size + data.length > this.#maxBytes) {
        Deno.renameSync(this.path, `${this.path}.1`);
        this.#size = 0;
      }
      try {
        Deno.writeFileSync(this.path, data, { append: true });
      } catch (e) {
        // A full disk may take part of the batch: cut it back, so no torn line is left behind.
        Deno.truncateSync(this.path, this.#size);
        throw e;
      }
      this.#size += data.length;
    } catch (e) {
      this.#size = undefined;
      console.error(`cannot write ${this.path}: ${(e as Error).message}`);
    }
  }
}

const logs = new WeakMap<AppContext, AccessLog>();

/** The access log of a server context. */
export function accessLogFor(ctx: AppContext): AccessLog {
  let log = logs.get(ctx);
  if (!log) logs.set(ctx, log = new AccessLog(accessLogPath(ctx.paths)));
  return log;
}

/** Middleware logging every request that reaches the app (use it first). */
export function accessLogMiddleware(ctx: AppContext): MiddlewareHandler<AppEnv> {
  const log = accessLogFor(ctx);
  return async function accessLog(c, next) {
    const started = performance.now();
    try {
      await next();
    } finally {
      log.record({
        ts: new Date().toISOString(),
        method: c.req.method,
        path: c.req.path,
        status: c.res.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        principal: c.get("principal")?.principal ?? null,
      });
    }
  };
}
