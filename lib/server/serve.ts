/** Start the HTTP server over a workspace. */
import { auditPaths, loadAuditKey } from "../audit/store.ts";
import { effectiveTokenSpecs, tokensActive, type TokenSpec } from "../auth/tokens.ts";
import type { AppContext } from "../http/context.ts";
import { workspacePaths } from "../workspace.ts";
import { createApp, type CreateAppOptions } from "../../routes/mod.ts";
import { accessLogFor } from "../http/access_log.ts";
import { repairStateOnStart } from "../state/startup_repair.ts";
import { closeTaskStore, openedTaskStore, taskStoreFor } from "../tasks/registry.ts";
import { closeTrackerService, trackerServiceFor } from "../trackers/service.ts";

/** Options of {@link startServer}. */
export interface StartServerOptions extends CreateAppOptions {
  root: string;
  host: string;
  port: number;
  tokens: TokenSpec[];
  signal?: AbortSignal;
  /** Print the listening line (default true). */
  announce?: boolean;
  /** Background tick (orphan sweep, export, access-log flush) in ms (default 1000). */
  tickMs?: number;
  /** Open the workspace's task store (default true; `gui serve` has no task API and does not). */
  taskStore?: boolean;
  /** Where start-up repairs and warnings are reported (default console.warn). */
  warn?: (line: string) => void;
}

/** A running server. */
export interface RunningServer {
  url: string;
  port: number;
  /** The server's context (its task store is `taskStoreFor(ctx)`). */
  ctx: AppContext;
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|::1|localhost)$/;

/** Thrown when the server would expose unauthenticated state beyond loopback. */
export class UnsafeBindError extends Error {
  constructor(host: string) {
    super(
      `refusing to bind ${host} with no bearer token configured: anyone on the network could act as ` +
        "dashboard-operator. Set SERVICE_TOKEN (or auth.tokens in service.yaml), or bind 127.0.0.1.",
    );
    this.name = "UnsafeBindError";
  }
}

/** Build the app context for a workspace. */
export function appContext(root: string, tokens: TokenSpec[]): AppContext {
  const paths = workspacePaths(root);
  const audit = auditPaths(paths.audit);
  let key: Promise<Uint8Array> | undefined;
  return {
    paths,
    tokenSpecs: () => effectiveTokenSpecs(tokens, (n) => Deno.env.get(n)),
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
  const ctx = { ...appContext(options.root, options.tokens), closing: closing.signal };
  if (!LOOPBACK.test(options.host) && !tokensActive(ctx.tokenSpecs(), (n) => Deno.env.get(n))) {
    throw new UnsafeBindError(options.host);
  }
  return serveContext(ctx, options, closing);
}

async function serveContext(
  ctx: AppContext,
  options: StartServerOptions,
  closing: AbortController,
): Promise<RunningServer> {
  const warn = options.warn ?? ((line: string) => console.warn(line));
  for (const line of await repairStateOnStart(ctx.paths)) warn(line);
  // The task store is opened (and owned) only by a server that serves the task API.
  if (options.taskStore !== false) await (await taskStoreFor(ctx)).flushExport();
  // Trackers (webhook ledger, pollers) feed the task store, so they run where it does.
  if (options.taskStore !== false) await trackerServiceFor(ctx, { warn });
  const app = createApp(ctx, options);
  // Open event streams end when the server stops, or shutdown() would wait on them.
  options.signal?.addEventListener("abort", () => closing.abort(), { once: true });
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
  let running: Omit<RunningServer, "ctx">;
  try {
    running = await listen(options, app.fetch);
  } catch (e) {
    await closeTrackerService(ctx);
    await closeTaskStore(ctx);
    throw e;
  }
  let ticking: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    ticking = ticking.then(tick).catch((e) =>
      warn(`background tick failed: ${(e as Error).message}`)
    );
  }, options.tickMs ?? 1000);
  const stopBackground = async () => {
    clearInterval(timer);
    await ticking;
    accessLogFor(ctx).flush();
    await closeTrackerService(ctx);
    await closeTaskStore(ctx);
  };
  const finished = running.finished.then(stopBackground);
  return {
    url: running.url,
    port: running.port,
    ctx,
    finished,
    shutdown: async () => {
      closing.abort();
      await running.shutdown();
      await finished;
    },
  };
}

function listen(
  options: StartServerOptions,
  fetch: (req: Request) => Response | Promise<Response>,
): Promise<Omit<RunningServer, "ctx">> {
  return new Promise((resolve, reject) => {
    try {
      let listening: { url: string; port: number } | undefined;
      const server: Deno.HttpServer = Deno.serve({
        hostname: options.host,
        port: options.port,
        signal: options.signal,
        onListen: ({ port }) => {
          const host = options.host.includes(":") ? `[${options.host}]` : options.host;
          const url = `http://${host}:${port}`;
          if (options.announce !== false) {
            console.log(`service listening on ${url} (workspace ${options.root})`);
          }
          listening = { url, port };
        },
      }, fetch);
      // onListen runs inside Deno.serve, before `server` exists.
      resolve({
        ...listening!,
        finished: server.finished,
        shutdown: () => server.shutdown(),
      });
    } catch (e) {
      reject(e);
    }
  });
}
