/**
 * The service's HTTP app, assembled at the edge (lib/ never imports routes/): every route
 * module of the generated manifest (`_manifest.gen.ts`, file-based routing) mounted on one Hono
 * app behind the defences of docs/security.md, each applied once, here, in this order:
 *
 * 1. access log (every request, refusals included);
 * 2. origin guard: foreign `Host` / `Origin`, non-JSON bodies (403/415);
 * 3. bounded bodies: 1 MiB (5 MiB for webhooks) while read (413);
 * 4. bearer auth and the scope matrix (401/403), public paths excepted.
 *
 * Connections (header and idle timeouts, the connection cap, descriptor exhaustion) are bounded
 * before a request exists, by the gate in front of the listener (lib/server/connection_gate.ts).
 * Domain errors and request refusals become JSON answers in one `onError`.
 */
import { type Context, Hono } from "hono";
import { bearerAuth } from "../lib/auth/middleware.ts";
import type { AppContext, AppEnv, Ctx } from "../lib/http/context.ts";
import { errorBody } from "../lib/http/errors.ts";
import { DomainError, statusOf } from "../lib/errors.ts";
import { originGuard } from "../lib/http/origin_guard.ts";
import { boundedBodies } from "../lib/http/body_limit.ts";
import { accessLogMiddleware } from "../lib/http/access_log.ts";
import type { ServedApp } from "../lib/server/serve.ts";
import { ROUTES } from "./_manifest.gen.ts";

/** HTTP methods a route module may export a handler for. */
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
type Method = typeof METHODS[number];
type Handler = (c: Ctx) => Response | Promise<Response>;

/** Paths also served with a trailing slash (spec §4: `/status/`; the page's own address). */
const SLASH_ALIASES = new Set(["/status", "/dashboard/review-board"]);

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Serve the task API (`/tasks…`); `gui serve` does not (default true). */
  taskApi?: boolean;
  /** Handlers replacing a route's (tests: an `/events` over a private hub). */
  overrides?: Record<string, Partial<Record<Method, Handler>>>;
}

/** Build the service's HTTP app over `ctx`. */
export function createApp(ctx: AppContext, options: AppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((err, c) => errorAnswer(err, c));
  app.notFound((c) =>
    c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404)
  );
  app.use("*", async (c, next) => {
    c.set("app", ctx);
    await next();
  });
  app.use("*", accessLogMiddleware(ctx));
  app.use("*", originGuard(ctx.origin ?? { bindHost: "127.0.0.1" }));
  app.use("*", boundedBodies());
  app.use("*", bearerAuth({ specs: ctx.tokenSpecs }));
  for (const route of ROUTES) {
    if (options.taskApi === false && route.path.startsWith("/tasks")) continue;
    const module = route.module as Partial<Record<Method, Handler>>;
    const override = options.overrides?.[route.path] ?? {};
    for (const method of METHODS) {
      const handler = override[method] ?? module[method];
      if (!handler) continue;
      app.on(method, route.path, handler);
      if (SLASH_ALIASES.has(route.path)) app.on(method, `${route.path}/`, handler);
    }
  }
  return app;
}

/** The JSON answer of a failure: a domain error's status and code, else 500 (logged). */
function errorAnswer(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof DomainError) {
    for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
    return c.json(errorBody(err.code, err.message), statusOf(err) as 400);
  }
  console.error(err);
  return c.json(errorBody("internal_error", `internal error: ${err.message}`), 500);
}

/** `service serve` and `service run`'s task server: every route. */
export const SERVER_APP: ServedApp = { build: (ctx) => createApp(ctx) };

/** `service gui serve`: the board, its API and `/events`; no task API, no task store. */
export const GUI_APP: ServedApp = {
  build: (ctx) => createApp(ctx, { taskApi: false }),
  taskStore: false,
};
