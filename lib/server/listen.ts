/**
 * Listening: the HTTP server (`Deno.serve`) on a private Unix socket, behind the connection
 * gate on the public address (lib/server/connection_gate.ts has why). A task server also has
 * the agents' listener: a second gate, on a loopback port of its own, in front of a second
 * socket whose requests the app is told came from agents (`{agentPath: true}`), so they are
 * never taken for the local operator (docs/security.md "Agents"). With `server.trusted_proxy`, a
 * third loopback port leads to a socket whose requests the app is told came from the single
 * sign-on proxy beside it (`{proxyPath: true}`): only there is its user header believed.
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
  /** Also listen for agents on a loopback port of its own (`Listening.agentUrl`). */
  agentListener?: boolean;
  /** The agents' port to take again when free (a restarted server's agents keep their URL). */
  agentPort?: number;
  /** The trusted proxy's loopback port (`server.trusted_proxy.port`), when one is configured. */
  proxyPort?: number;
}

/** Where a request came in: the agents' listener, the trusted proxy's, or the public one. */
export interface ListenerEnv {
  agentPath: boolean;
  proxyPath?: boolean;
}

/** The app's fetch: `env` says which listener the request came through. */
export type GatedFetch = (req: Request, env?: ListenerEnv) => Response | Promise<Response>;

/** A listening server. */
export interface Listening {
  url: string;
  port: number;
  /** The agents' listener (`http://127.0.0.1:<port>`), when asked for. */
  agentUrl?: string;
  finished: Promise<void>;
  shutdown(): Promise<void>;
  /** Connection counters of the gate. */
  connections(): GateStats;
}

/** Serve `fetch` on `host:port` behind the gate. Throws AddrInUse before serving anything. */
export async function listenGated(
  options: ListenOptions,
  fetch: GatedFetch,
): Promise<Listening> {
  const dir = await makeSocketDir();
  const serve = (path: string, handler: (req: Request) => Response | Promise<Response>) =>
    Deno.serve({
      transport: "unix",
      path,
      onListen: () => {},
      // A handler error that escaped the app's onError: answer 500 without echoing a stack.
      onError: () =>
        Response.json({ error: { code: "internal_error", message: "internal error" } }, {
          status: 500,
        }),
    }, handler);
  const servers = [serve(join(dir, "http.sock"), (req) => fetch(req, { agentPath: false }))];
  if (options.agentListener) {
    servers.push(serve(join(dir, "agents.sock"), (req) => fetch(req, { agentPath: true })));
  }
  if (options.proxyPort) {
    servers.push(
      serve(join(dir, "proxy.sock"), (req) => fetch(req, { agentPath: false, proxyPath: true })),
    );
  }
  const gates: Gate[] = [];
  try {
    const limits = options.server ?? {};
    const gateOn = (hostname: string, port: number, backendPath: string) =>
      openGate({
        hostname,
        port,
        backendPath,
        maxConnections: limits.max_connections ?? defaultMaxConnections(),
        headerTimeoutMs: (limits.header_timeout_s ?? 10) * 1000,
        idleTimeoutMs: (limits.idle_timeout_s ?? 75) * 1000,
        warn: options.warn,
      });
    gates.push(gateOn(options.host, options.port, join(dir, "http.sock")));
    // Agents run on this machine (a remote worker's reach the public address with their token).
    if (options.agentListener) {
      const agents = join(dir, "agents.sock");
      let agentGate: Gate | undefined;
      if (options.agentPort) {
        try {
          agentGate = gateOn("127.0.0.1", options.agentPort, agents);
        } catch (e) {
          if (!(e instanceof Deno.errors.AddrInUse)) throw e;
        }
      }
      gates.push(agentGate ?? gateOn("127.0.0.1", 0, agents));
    }
    // The proxy beside the service (a sidecar) reaches it on loopback only.
    if (options.proxyPort) {
      gates.push(gateOn("127.0.0.1", options.proxyPort, join(dir, "proxy.sock")));
    }
  } catch (e) {
    for (const g of gates) g.close();
    await Promise.all(servers.map((s) => s.shutdown()));
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw e;
  }
  const gate = gates[0];
  const agentGate = options.agentListener ? gates[1] : undefined;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  const url = `http://${host}:${gate.port}`;
  options.onListen?.(url);
  const shutdown = async () => {
    for (const g of gates) g.stopAccepting();
    await Promise.all(servers.map((s) => s.shutdown()));
  };
  options.signal?.addEventListener("abort", () => void shutdown(), { once: true });
  const finished = Promise.all(servers.map((s) => s.finished)).then(async () => {
    for (const g of gates) g.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  });
  return {
    url,
    port: gate.port,
    ...(agentGate ? { agentUrl: `http://127.0.0.1:${agentGate.port}` } : {}),
    finished,
    shutdown: async () => {
      await shutdown();
      await finished;
    },
    connections: () => gate.stats(),
  };
}
