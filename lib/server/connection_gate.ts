/**
 * The server's front door (docs/security.md "Connections"). `Deno.serve` has no header or idle
 * timeout, no connection cap, and ends the process when `accept` runs out of descriptors, so
 * the public port is a listener of ours that hands each connection to the HTTP server (on a
 * private Unix socket) once its first request head is complete, and enforces:
 *
 * - a header timeout: every request head must be complete within `headerTimeoutMs` of its first
 *   byte (408 and close), the first one also within that time of the connection opening;
 * - an idle timeout: no byte either way for `idleTimeoutMs` closes the connection;
 * - a connection cap: beyond `maxConnections` the idlest connection with no request in flight
 *   (one still sending its first head, or silent for a while) is closed to make room, else the
 *   newcomer gets 503 with `Retry-After`;
 * - descriptor exhaustion: `accept` failing with EMFILE frees a reserved descriptor to answer
 *   503 and close, sheds idle connections, and keeps serving; it never ends the process.
 *
 * An idle connection that has sent nothing costs one descriptor and a small read buffer.
 */
import { MAX_HEAD_BYTES, RequestFraming } from "./request_framing.ts";

/** Limits of the gate. */
export interface GateLimits {
  maxConnections: number;
  headerTimeoutMs: number;
  idleTimeoutMs: number;
}

/** Counters for `/status` and tests. */
export interface GateStats {
  open: number;
  accepted: number;
  refused: number;
  evicted: number;
  headerTimeouts: number;
  idleTimeouts: number;
  acceptErrors: number;
}

/** Options of {@link openGate}. */
export interface GateOptions extends GateLimits {
  hostname: string;
  port: number;
  /** The Unix socket of the HTTP server behind the gate. */
  backendPath: string;
  /** Reports of refusals and accept errors (default: silent). */
  warn?: (line: string) => void;
}

/** A listening gate. */
export interface Gate {
  port: number;
  stats(): GateStats;
  /** Stop accepting new connections (open ones carry on). */
  stopAccepting(): void;
  /** Stop accepting; close every connection. */
  close(): void;
}

const FIRST_READ = 2 * 1024;
const PIPE_READ = 32 * 1024;
/** A connection silent this long (and not in a request head) may be evicted at the cap. */
const EVICTABLE_IDLE_MS = 20_000;
const encoder = new TextEncoder();
const STATUS_413 = encoder.encode("HTTP/1.1 413");

const REFUSALS: Record<string, { code: string; message: string }> = {
  "503": { code: "server_busy", message: "the server is at its connection limit; retry shortly" },
  "408": { code: "request_timeout", message: "the request head did not arrive in time" },
  "431": {
    code: "head_too_large",
    message: `the request head passed ${MAX_HEAD_BYTES / 1024} KiB: send fewer or smaller ` +
      "headers (a browser sends every cookie of this host name, whatever its port: clear them)",
  },
};

function refusal(status: string, retryAfter?: number): Uint8Array {
  const extra = retryAfter ? `Retry-After: ${retryAfter}\r\n` : "";
  const body = JSON.stringify({ error: REFUSALS[status.slice(0, 3)] });
  return encoder.encode(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json\r\n${extra}Connection: close\r\n` +
      `Content-Length: ${body.length}\r\n\r\n${body}`,
  );
}

class Tracked {
  backend: Deno.UnixConn | undefined;
  readonly framing = new RequestFraming();
  readonly opened = Date.now();
  lastActivity = Date.now();
  /** When the request head now being received started (0 when none is open). */
  headStarted: number;
  requests = 0;
  closed = false;
  /** The response being relayed is a 413: close once it has been delivered. */
  cutOff: { left: number } | undefined;
  pending: Uint8Array[] = [];

  constructor(readonly conn: Deno.Conn) {
    this.headStarted = this.opened;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const c of [this.conn, this.backend]) {
      try {
        c?.close();
      } catch { /* already closed */ }
    }
  }
}

/** Listen on `hostname:port` and relay to the HTTP server at `backendPath` under `limits`. */
export function openGate(options: GateOptions): Gate {
  const listener = Deno.listen({ hostname: options.hostname, port: options.port });
  const relay = new Relay(options, listener);
  const sweep = setInterval(
    () => relay.sweep(Date.now()),
    Math.max(50, Math.min(1000, options.headerTimeoutMs / 4)),
  );
  relay.acceptLoop();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    stats: () => ({ ...relay.stats, open: relay.live.size }),
    stopAccepting() {
      if (relay.stopping) return;
      relay.stopping = true;
      try {
        listener.close();
      } catch { /* closed */ }
    },
    close() {
      this.stopAccepting();
      clearInterval(sweep);
      for (const t of [...relay.live]) relay.drop(t);
      try {
        relay.reserve?.close();
      } catch { /* closed */ }
      relay.reserve = undefined;
    },
  };
}

/** The gate's connections and what it does with each: accept, time out, evict, relay. */
class Relay {
  readonly live = new Set<Tracked>();
  readonly stats: GateStats = {
    open: 0,
    accepted: 0,
    refused: 0,
    evicted: 0,
    headerTimeouts: 0,
    idleTimeouts: 0,
    acceptErrors: 0,
  };
  /** A descriptor held back to answer one newcomer when `accept` runs out of them. */
  reserve: Deno.FsFile | undefined = openReserve();
  stopping = false;
  readonly #warn: (line: string) => void;

  constructor(readonly options: GateOptions, readonly listener: Deno.Listener) {
    this.#warn = options.warn ?? (() => {});
  }

  drop(t: Tracked): void {
    if (!this.live.delete(t)) return;
    t.close();
    this.stats.open = this.live.size;
  }

  /** Close the idlest connection that awaits no answer; false when every one does. */
  evictOne(now: number): boolean {
    let victim: Tracked | undefined;
    for (const t of this.live) {
      const quiet = now - t.lastActivity;
      // Not yet past its first request head, or silent for long: no answer is being awaited.
      if (t.requests > 0 && quiet <= EVICTABLE_IDLE_MS) continue;
      if (!victim || t.lastActivity < victim.lastActivity) victim = t;
    }
    if (!victim) return false;
    this.stats.evicted++;
    this.drop(victim);
    return true;
  }

  /** The header and idle timeouts, checked on every live connection. */
  sweep(now: number): void {
    for (const t of this.live) {
      if (t.headStarted && now - t.headStarted > this.options.headerTimeoutMs) {
        this.stats.headerTimeouts++;
        t.conn.write(refusal("408 Request Timeout")).catch(() => {}).finally(() => this.drop(t));
        t.headStarted = 0;
      } else if (now - t.lastActivity > this.options.idleTimeoutMs) {
        this.stats.idleTimeouts++;
        this.drop(t);
      }
    }
  }

  /** Accept until stopped; running out of descriptors never ends the loop. */
  async acceptLoop(): Promise<void> {
    while (!this.stopping) {
      let conn: Deno.Conn;
      try {
        conn = await this.listener.accept();
      } catch (e) {
        if (this.stopping || e instanceof Deno.errors.BadResource) break;
        await this.#acceptFailed(e as Error);
        continue;
      }
      this.serveOne(conn);
    }
  }

  /** Out of descriptors: shed idle connections, answer one newcomer from the reserve. */
  async #acceptFailed(e: Error): Promise<void> {
    this.stats.acceptErrors++;
    this.evictOne(Date.now());
    if (this.reserve) {
      this.reserve.close();
      this.reserve = undefined;
      try {
        const c = await this.listener.accept();
        this.stats.refused++;
        await c.write(refusal("503 Service Unavailable", 1)).catch(() => {});
        c.close();
      } catch { /* still none */ }
      this.reserve = openReserve();
    }
    this.#warn(`accept failed (${e.message}); shedding idle connections`);
    await new Promise((r) => setTimeout(r, 50));
  }

  /** Take a new connection in, making room at the cap or refusing it with 503. */
  serveOne(conn: Deno.Conn): void {
    this.stats.accepted++;
    // The relay writes each response in pieces: without TCP_NODELAY, Nagle's algorithm and the
    // client's delayed ACK hold a small keep-alive response back ~40 ms.
    try {
      (conn as Deno.TcpConn).setNoDelay?.(true);
    } catch { /* not a TCP connection */ }
    if (this.live.size >= this.options.maxConnections && !this.evictOne(Date.now())) {
      this.stats.refused++;
      conn.write(refusal("503 Service Unavailable", 1)).catch(() => {}).finally(() => {
        try {
          conn.close();
        } catch { /* closed */ }
      });
      return;
    }
    const t = new Tracked(conn);
    this.live.add(t);
    this.stats.open = this.live.size;
    this.relayToBackend(t).catch(() => this.drop(t));
  }

  /** Client to server: held until the first request head is complete, then piped. */
  async relayToBackend(t: Tracked): Promise<void> {
    let buf = new Uint8Array(FIRST_READ);
    while (!t.closed) {
      const n = await t.conn.read(buf).catch(() => null);
      if (n === null) break;
      const bytes = buf.subarray(0, n);
      t.lastActivity = Date.now();
      const step = t.framing.push(bytes);
      if (step.headTooLarge) {
        // Before its first answer the connection is ours to answer; later ones may be mid-answer.
        if (!t.backend) {
          await t.conn.write(refusal("431 Request Header Fields Too Large")).catch(() => {});
        }
        this.drop(t);
        return;
      }
      t.requests += step.headsCompleted;
      if (step.headOpen && !t.headStarted) t.headStarted = Date.now();
      if (!step.headOpen) t.headStarted = 0;
      if (t.cutOff) continue; // a refused body: read and drop until the 413 is delivered
      if (!t.backend) {
        t.pending.push(bytes.slice());
        if (t.requests === 0) continue; // hand over only complete heads
        if (!(await this.#handOver(t))) return;
        buf = new Uint8Array(PIPE_READ);
        continue;
      }
      if (!(await writeAll(t.backend, bytes).then(() => true, () => false))) break;
    }
    // The client finished sending; let the server answer what it has, then close.
    if (!t.backend) this.drop(t);
    else {
      try {
        await t.backend.closeWrite();
      } catch { /* closed */ }
    }
  }

  /** Connect `t` to the HTTP server and send what it held; false (503 sent) when unreachable. */
  async #handOver(t: Tracked): Promise<boolean> {
    try {
      t.backend = await Deno.connect({ transport: "unix", path: this.options.backendPath });
    } catch (e) {
      this.#warn(`connection refused: the HTTP server is unreachable (${(e as Error).message})`);
      this.stats.refused++;
      await t.conn.write(refusal("503 Service Unavailable", 1)).catch(() => {});
      this.drop(t);
      return false;
    }
    this.relayToClient(t);
    for (const p of t.pending.splice(0)) await writeAll(t.backend, p).catch(() => this.drop(t));
    return true;
  }

  /** Server to client, closing after a 413 has been delivered. */
  async relayToClient(t: Tracked): Promise<void> {
    const buf = new Uint8Array(PIPE_READ);
    let first = true;
    while (!t.closed && t.backend) {
      const n = await t.backend.read(buf).catch(() => null);
      if (n === null) break;
      t.lastActivity = Date.now();
      const bytes = buf.subarray(0, n);
      if (first || t.cutOff === undefined) {
        const cut = payloadTooLarge(bytes);
        if (cut !== undefined) t.cutOff = { left: cut };
      }
      first = false;
      if (!(await writeAll(t.conn, bytes).then(() => true, () => false))) break;
      if (t.cutOff) {
        t.cutOff.left -= n;
        if (t.cutOff.left <= 0) break;
      }
    }
    this.drop(t);
  }
}

/** The body length of a 413 response head in `bytes` (headers included), else undefined. */
function payloadTooLarge(bytes: Uint8Array): number | undefined {
  // Most answers are not 413s: compare the status line's bytes before decoding anything.
  for (let i = 0; i < STATUS_413.length; i++) if (bytes[i] !== STATUS_413[i]) return undefined;
  const text = new TextDecoder().decode(bytes.subarray(0, Math.min(bytes.length, 1024)));
  const end = text.indexOf("\r\n\r\n");
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text);
  if (end < 0 || !length) return bytes.length;
  return end + 4 + Number(length[1]);
}

async function writeAll(
  w: { write(p: Uint8Array): Promise<number> },
  bytes: Uint8Array,
): Promise<void> {
  let at = 0;
  while (at < bytes.length) at += await w.write(bytes.subarray(at));
}

function openReserve(): Deno.FsFile | undefined {
  try {
    return Deno.openSync("/dev/null");
  } catch {
    return undefined;
  }
}

/** The default connection cap: what the descriptor limit allows (3 per relayed connection). */
export function defaultMaxConnections(): number {
  let soft = 1024;
  try {
    const limits = Deno.readTextFileSync("/proc/self/limits");
    const m = /Max open files\s+(\d+|unlimited)/.exec(limits);
    if (m) soft = m[1] === "unlimited" ? 1 << 20 : Number(m[1]);
  } catch { /* not Linux: assume 1024 */ }
  return Math.max(16, Math.floor((soft - 128) / 3));
}
