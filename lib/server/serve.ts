/** Start the HTTP server over a workspace. */
import { auditPaths, loadAuditKey } from "../audit/store.ts";
import {
  assertTokenVariablesSet,
  effectiveTokenSpecs,
  tokensActive,
  type TokenSpec,
} from "../auth/tokens.ts";
import type { AppContext } from "../http/context.ts";
import { workspacePaths } from "../workspace.ts";
import { accessLogFor } from "../http/access_log.ts";
import { warmUpFold } from "../board/warm_up.ts";
import { repairStateOnStart } from "../state/startup_repair.ts";
import type { ServerBlock } from "../config/schema.ts";
import { UserFacingError } from "../errors.ts";
import type { OriginPolicy } from "../http/origin_guard.ts";
import { type ListenerEnv, listenGated, type Listening } from "./listen.ts";
import type { GateStats } from "./connection_gate.ts";
import { closeTaskStore, openedTaskStore, taskStoreFor } from "../tasks/registry.ts";
import { closeTrackerService, trackerServiceFor } from "../trackers/service.ts";
import { journalOperatorChange, reapCancelled } from "../orchestrator/task_control.ts";
import { newServerIdentity } from "../discovery/identity.ts";
import { publishServer, withdrawServer } from "../discovery/record.ts";
import { ServerLog } from "./server_log.ts";
import { isLoopbackHost, isWildcardHost } from "../util/loopback.ts";
import { agentUrlFor, setAgentUrl } from "../auth/agent_credentials.ts";
import { assertProxySecretSet } from "../auth/trusted_proxy.ts";
import { secretEnv } from "../auth/secret_env.ts";

/**
 * The app a server serves, built at the edge (routes/_app.ts: `SERVER_APP`, `GUI_APP`) and
 * handed in, so lib/ never imports routes/, components/ or islands/.
 */
export interface ServedApp {
  build(ctx: AppContext): {
    /** `env`: which listener the request came through (lib/server/listen.ts). */
    fetch(request: Request, env?: ListenerEnv): Response | Promise<Response>;
    /**
     * Import the handlers agents call (claims, heartbeats, reports) now, not on their first
     * request (routes/_app.ts); see {@link StartServerOptions.warmRoutes}.
     */
    warm?(): Promise<void>;
  };
  /** Open the workspace's task store (default true; `gui serve` has no task API). */
  taskStore?: boolean;
}

/** Options of {@link startServer}. */
export interface StartServerOptions {
  /** The app to serve (routes/_app.ts). */
  app: ServedApp;
  root: string;
  host: string;
  port: number;
  tokens: TokenSpec[];
  /** The `server` block of service.yaml (public URL, allowed origins, limits). */
  server?: Partial<ServerBlock>;
  signal?: AbortSignal;
  /** Print the listening line (default true). */
  announce?: boolean;
  /** Background tick (orphan sweep, export, access-log flush) in ms (default 1000). */
  tickMs?: number;
  /** Where start-up repairs and warnings are reported (default console.warn). */
  warn?: (line: string) => void;
  /**
   * Run the board's verify-and-fold path over a small synthetic journal before taking
   * connections (the CLI's servers do), so a first board request of a large journal finds it
   * compiled by the optimising tiers. Default false.
   */
  warmUpBoard?: boolean;
  /**
   * Import the task API's handlers right after the listen (`service run`: its agents claim at
   * once, and none should wait on an import). Default false: an idle server holds only the
   * route modules requests have needed (docs/performance.md, tenth round).
   */
  warmRoutes?: boolean;
}

/** A running server. */
export interface RunningServer {
  url: string;
  port: number;
  /** Where this machine's agents call the task API (a server with the task API only). */
  agentUrl?: string;
  /** The server's context (its task store is `taskStoreFor(ctx)`). */
  ctx: AppContext;
  finished: Promise<void>;
  shutdown(): Promise<void>;
  /** Connection counters of the gate (open, refused, evicted, timeouts). */
  connections(): GateStats;
}

/** Thrown when the server would expose unauthenticated state beyond loopback. */
export class UnsafeBindError extends UserFacingError {
  constructor(host: string) {
    super(
      `refusing to bind ${host} with no bearer token configured: anyone on the network could act as ` +
        "dashboard-operator. Set SERVICE_TOKEN (or auth.tokens in service.yaml), or bind 127.0.0.1.",
      1,
      "set SERVICE_TOKEN (or auth.tokens in service.yaml), or bind 127.0.0.1",
    );
    this.name = "UnsafeBindError";
  }
}

/** The agents' port the workspace's last server listened on (`.sdd/runtime/agent-port`). */
async function previousAgentPort(runtime: string): Promise<number | undefined> {
  const text = await Deno.readTextFile(`${runtime}/agent-port`).catch(() => "");
  const port = Number(text.trim());
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}

/** Build the app context for a workspace. */
export function appContext(root: string, tokens: TokenSpec[]): AppContext {
  const paths = workspacePaths(root);
  const audit = auditPaths(paths.audit);
  let key: Promise<Uint8Array> | undefined;
  return {
    paths,
    // Each token is its variable, or the file `<variable>_FILE` names (a mounted Secret).
    tokenSpecs: () => effectiveTokenSpecs(tokens, (n) => secretEnv(n)),
    auditKey: () => {
      // SERVICE_AUDIT_KEY is read per call so it can rotate; the file key is cached once made.
      if (Deno.env.get("SERVICE_AUDIT_KEY")) return loadAuditKey(audit);
      key ??= loadAuditKey(audit).catch((e) => {
        key = undefined;
        throw e;
      });
      return key;
    },
  };
}

/**
 * Serve the workspace until `signal` aborts or `shutdown()` is called. Before listening it
 * repairs torn state files (reporting what was dropped) and opens the task store; while it
 * runs, a ticker sweeps orphaned tasks, writes the backlog export and flushes the access log.
 */
export function startServer(options: StartServerOptions): Promise<RunningServer> {
  const closing = new AbortController();
  const ctx = {
    ...appContext(options.root, options.tokens),
    closing: closing.signal,
    origin: originPolicy(options.host, options.server),
    maxEventStreams: options.server?.max_event_streams,
    ...(options.server?.trusted_proxy ? { trustedProxy: options.server.trusted_proxy } : {}),
  };
  // Auth fails closed: a configured token with no value is a start-up error naming it.
  assertTokenVariablesSet(options.tokens, (n) => secretEnv(n));
  assertProxySecretSet(options.server?.trusted_proxy, (n) => secretEnv(n));
  if (!isLoopbackHost(options.host) && !tokensActive(ctx.tokenSpecs())) {
    throw new UnsafeBindError(options.host);
  }
  return serveContext(ctx, options, closing);
}

/** The hosts and origins the server answers: its bind address, loopback, the configured ones. */
function originPolicy(host: string, server: Partial<ServerBlock> = {}): OriginPolicy {
  const extraHosts: string[] = [];
  if (isWildcardHost(host)) {
    // A wildcard bind is reached by the machine's own addresses and name.
    for (const ni of safe(() => Deno.networkInterfaces(), [])) extraHosts.push(ni.address);
    const name = safe(() => Deno.hostname(), "");
    if (name) extraHosts.push(name);
  }
  return {
    bindHost: host,
    publicUrl: server.public_url,
    allowedOrigins: server.allowed_origins ?? [],
    extraHosts,
  };
}

function safe<T>(f: () => T, fallback: T): T {
  try {
    return f();
  } catch {
    return fallback;
  }
}

async function serveContext(
  ctx: AppContext,
  options: StartServerOptions,
  closing: AbortController,
): Promise<RunningServer> {
  const log = new ServerLog(ctx.paths);
  const tell = options.warn ?? ((line: string) => console.warn(line));
  const warn = (line: string) => {
    log.line(line);
    tell(line);
  };
  // Commands find this server by its record and check this identity (lib/discovery).
  ctx.identity = await newServerIdentity(options.root);
  for (const line of await repairStateOnStart(ctx.paths)) warn(line);
  // The task store is opened (and owned) only by a server that serves the task API.
  if (options.app.taskStore !== false) await (await taskStoreFor(ctx)).flushExport();
  // Trackers (webhook ledger, pollers) feed the task store, so they run where it does.
  if (options.app.taskStore !== false) {
    await trackerServiceFor(ctx, {
      warn,
      // A ticket's cancel or new attempt is recorded as an operator's through the task API is.
      afterTicketChange: async (kind, task) => {
        if (!(await journalOperatorChange(ctx.paths.root, kind, task))) return;
        if (kind === "cancel") {
          void reapCancelled(ctx.paths.root, task).then((l) => l.forEach(warn));
        }
      },
    });
  }
  const app = options.app.build(ctx);
  // Open event streams end when the server stops, or shutdown() would wait on them.
  options.signal?.addEventListener("abort", () => closing.abort(), { once: true });
  // Before the first connection: see StartServerOptions.warmUpBoard.
  if (options.warmUpBoard) warmUpFold();
  const running = await listen(ctx, options, app, { log, warn });
  // Off the first request's path: a request that comes meanwhile shares the same import.
  const warmed = options.warmRoutes ? app.warm?.() : undefined;
  const serving: Serving = { ctx, options, log, warn, running };
  await announce(serving);
  const finished = running.finished.then(background(serving)).then(() => warmed);
  // `/status` reports the gate's counters (docs/security.md "Connections").
  ctx.connections = () => connectionCounts(running.connections());
  return {
    url: running.url,
    port: running.port,
    ...(running.agentUrl ? { agentUrl: running.agentUrl } : {}),
    ctx,
    finished,
    connections: running.connections,
    shutdown: async () => {
      closing.abort();
      await running.shutdown();
      await finished;
    },
  };
}

/** A server that listens, with what the steps after the listen need. */
interface Serving {
  ctx: AppContext;
  options: StartServerOptions;
  log: ServerLog;
  warn: (line: string) => void;
  running: Listening;
}

/** Listen behind the gate; a listen that fails closes what was opened for it. */
async function listen(
  ctx: AppContext,
  options: StartServerOptions,
  app: ReturnType<ServedApp["build"]>,
  { log, warn }: Pick<Serving, "log" | "warn">,
): Promise<Listening> {
  try {
    return await listenGated({
      host: options.host,
      port: options.port,
      server: options.server,
      signal: options.signal,
      warn,
      // Agents reach the task API at an address of their own, never taken for the operator;
      // a restarted server takes the same port again, so agents that run on find it.
      agentListener: options.app.taskStore !== false,
      agentPort: await previousAgentPort(ctx.paths.runtime),
      ...(ctx.trustedProxy ? { proxyPort: ctx.trustedProxy.port } : {}),
    }, (req, env) => app.fetch(req, env));
  } catch (e) {
    log.line(`could not listen on ${options.host}:${options.port}: ${(e as Error).message}`);
    await closeTrackerService(ctx);
    await closeTaskStore(ctx);
    throw e;
  }
}

/** Only the owner of the task store serves the task API, so only it publishes a record. */
function publishes(options: StartServerOptions): boolean {
  return options.app.taskStore !== false;
}

/** Publish the server's record and its agents' address, then say where it listens. */
async function announce({ ctx, options, log, running }: Serving): Promise<void> {
  const identity = ctx.identity!;
  log.line(`listening on ${running.url} (workspace ${identity.workspace}, pid ${Deno.pid})`);
  if (publishes(options)) {
    try {
      await publishServer(ctx.paths, {
        ...identity,
        pid: Deno.pid,
        url: running.url,
        started_at: new Date().toISOString(),
      });
    } catch (e) {
      // A server no command can find would look like none at all: stop rather than linger.
      log.line(`could not write ${ctx.paths.serverRecord}: ${(e as Error).message}`);
      await running.shutdown();
      await closeTrackerService(ctx);
      await closeTaskStore(ctx);
      throw e;
    }
  }
  if (running.agentUrl) {
    ctx.agentUrl = running.agentUrl;
    setAgentUrl(ctx.paths.root, running.agentUrl);
    await Deno.writeTextFile(
      `${ctx.paths.runtime}/agent-port`,
      new URL(running.agentUrl).port + "\n",
    ).catch(() => {});
  }
  // Said once the record is out: whoever reads this line finds the server by it.
  if (options.announce !== false) {
    console.log(`service listening on ${running.url} (workspace ${options.root})`);
  }
}

/**
 * Start the background tick (access log, orphan sweep, backlog export); returns what stops it
 * and closes everything once the server has finished.
 */
function background({ ctx, options, log, warn, running }: Serving): () => Promise<void> {
  const identity = ctx.identity!;
  const tick = async () => {
    accessLogFor(ctx).flush();
    const store = openedTaskStore(ctx);
    if (!store) return;
    const s = await store;
    for (const t of await s.sweepOrphans()) {
      warn(`task ${t.id} ORPHANED: no heartbeat from session ${t.session_id}`);
    }
    await s.flushExport();
  };
  let ticking: Promise<void> = Promise.resolve();
  // `/healthz` says stuck when a tick has not finished for long (lib/metrics/health.ts).
  const everyMs = options.tickMs ?? 1000;
  ctx.ticked = { at: Date.now(), everyMs };
  const timer = setInterval(() => {
    ticking = ticking.then(tick).catch((e) =>
      warn(`background tick failed: ${(e as Error).message}`)
    ).finally(() => {
      ctx.ticked = { at: Date.now(), everyMs };
    });
  }, everyMs);
  return async () => {
    clearInterval(timer);
    await ticking;
    accessLogFor(ctx).flush();
    if (publishes(options)) await withdrawServer(ctx.paths, identity.instance);
    if (running.agentUrl && agentUrlFor(ctx.paths.root) === running.agentUrl) {
      setAgentUrl(ctx.paths.root, undefined);
    }
    await closeTrackerService(ctx);
    await closeTaskStore(ctx);
    log.line(`stopped (${running.url})`);
  };
}

/** The gate's counters as `/status` reports them. */
function connectionCounts(s: GateStats) {
  return {
    open: s.open,
    accepted: s.accepted,
    refused: s.refused,
    evicted: s.evicted,
    header_timeouts: s.headerTimeouts,
    idle_timeouts: s.idleTimeouts,
    accept_errors: s.acceptErrors,
  };
}
