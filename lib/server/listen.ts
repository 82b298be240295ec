/**
 * Listening: the HTTP server (`Deno.serve`) on a private Unix socket, behind the connection
 * gate on the public address (lib/server/connection_gate.ts has why).
 */
import { join } from "node:path";
import { defaultMaxConnections, type Gate, type GateStats, openGate } from "./connection_gate.ts";
import type { ServerBlock } from "../config/schema.ts";
import { makeSocketDir } from "./socket_dir.ts";

/** Where and how to listen. */
export interface ListenOptions {
  host: string;
  port: number;
  server?: Partial<ServerBlock>;
  signal?: AbortSignal;
  /** Called with the URL once listening. */
  onListen?: (url: string) => void;
  warn?: (line: string) => void;
}

/** A listening server. */
export interface Listening {
  url: string;
  port: number;
  finished: Promise<void>;
  shutdown(): Promise<void>;
  /** Connection counters of the gate. */
  connections(): GateStats;
}

/** Serve `fetch` on `host:port` behind the gate. Throws AddrInUse before serving anything. */
export async function listenGated(
  options: ListenOptions,
  fetch: (req: Request) => Response | Promise<Response>,
): Promise<Listening> {
  const dir = await makeSocketDir();
  const backendPath = join(dir, "http.sock");
  const server = Deno.serve({
    transport: "unix",
    path: backendPath,
    onListen: () => {},
    // A handler error that escaped the app's onError: answer 500 without echoing a stack.
    onError: () =>
      Response.json({ error: { code: "internal_error", message: "internal error" } }, {
        status: 500,
      }),
  }, fetch);
  let gate: Gate;
  try {
    const limits = options.server ?? {};
    gate = openGate({
      hostname: options.host,
      port: options.port,
      backendPath,
      maxConnections: limits.max_connections ?? defaultMaxConnections(),
      headerTimeoutMs: (limits.header_timeout_s ?? 10) * 1000,
      idleTimeoutMs: (limits.idle_timeout_s ?? 75) * 1000,
      warn: options.warn,
    });
  } catch (e) {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${host}:${gate.port}`;
  options.onListen?.(url);
  const shutdown = async () => {
    gate.stopAccepting();
    await server.shutdown();
  };
  options.signal?.addEventListener("abort", () => void shutdown(), { once: true });
  const finished = server.finished.then(async () => {
    gate.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  });
  return {
    url,
    port: gate.port,
    finished,
    shutdown: async () => {
      await shutdown();
      await finished;
    },
    connections: () => gate.stats(),
  };
}
