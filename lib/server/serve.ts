/** Start the HTTP server over a workspace. */
import { auditPaths, loadAuditKey } from "../audit/store.ts";
import { effectiveTokenSpecs, tokensActive, type TokenSpec } from "../auth/tokens.ts";
import type { AppContext } from "../http/context.ts";
import { workspacePaths } from "../workspace.ts";
import { createApp, type CreateAppOptions } from "../../routes/mod.ts";

/** Options of {@link startServer}. */
export interface StartServerOptions extends CreateAppOptions {
  root: string;
  host: string;
  port: number;
  tokens: TokenSpec[];
  signal?: AbortSignal;
  /** Print the listening line (default true). */
  announce?: boolean;
}

/** A running server. */
export interface RunningServer {
  url: string;
  port: number;
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

/** Serve the workspace until `signal` aborts or `shutdown()` is called. */
export function startServer(options: StartServerOptions): Promise<RunningServer> {
  const closing = new AbortController();
  const ctx = { ...appContext(options.root, options.tokens), closing: closing.signal };
  if (!LOOPBACK.test(options.host) && !tokensActive(ctx.tokenSpecs(), (n) => Deno.env.get(n))) {
    throw new UnsafeBindError(options.host);
  }
  const app = createApp(ctx, options);
  options.signal?.addEventListener("abort", () => closing.abort(), { once: true });
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
      }, app.fetch);
      // onListen runs inside Deno.serve, before `server` exists.
      resolve({
        ...listening!,
        finished: server.finished,
        shutdown: () => {
          closing.abort();
          return server.shutdown();
        },
      });
    } catch (e) {
      reject(e);
    }
  });
}
