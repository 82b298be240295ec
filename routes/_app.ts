/**
 * The service's HTTP app, assembled at the edge (lib/ never imports routes/): every route of the
 * generated manifest (`_manifest.gen.ts`, file-based routing) mounted on one Hono app behind the
 * defences of docs/security.md. The access log sees every request, refusals included; then each
 * route gets what its module's `policy` states (carried into the manifest as data, so all of it
 * is mounted at start), in this order:
 *
 * 1. origin guard: foreign `Host` / `Origin`, non-JSON bodies (403/415), unless a signed delivery;
 * 2. a bounded body: the route's `bodyLimit`, enforced while read (413);
 * 3. bearer auth and the scope its method needs (401/403), unless public.
 *
 * A handler's module is imported by the first request that passes its route's defences
 * (lib/http/lazy_route.ts): a refused request loads nothing, and an idle server holds only the
 * modules requests have needed. The handlers agents, workers and trackers call are imported
 * together: the first request to one starts the others, so a worker's claim does not wait on
 * an import after its registration did; `warm()` starts them all (`service run`'s task server,
 * right after the listen: its agents claim at once).
 *
 * Connections (header and idle timeouts, the connection cap, descriptor exhaustion) are bounded
 * before a request exists, by the gate in front of the listener (lib/server/connection_gate.ts).
 * Domain errors and request refusals become JSON answers in one `onError`.
 */
import { type Context, Hono } from "hono";
import type { MiddlewareHandler } from "hono";
import { bearerAuth } from "../lib/http/bearer_auth.ts";
import type { AppContext, AppEnv, Ctx } from "../lib/http/context.ts";
import { errorBody } from "../lib/http/errors.ts";
import { DomainError, statusOf } from "../lib/errors.ts";
import { originGuard } from "../lib/http/origin_guard.ts";
import { boundedBody } from "../lib/http/body_limit.ts";
import type { RouteMethod, RoutePolicy } from "../lib/http/route_policy.ts";
import { accessLogMiddleware } from "../lib/http/access_log.ts";
import type { ServedApp } from "../lib/server/serve.ts";
import { lazyHandler, loadOnce, type RouteEntry, routeMethods } from "../lib/http/lazy_route.ts";
import { ROUTES } from "./_manifest.gen.ts";

type Handler = (c: Ctx) => Response | Promise<Response>;

/** Options of {@link createApp}. */
export interface AppOptions {
  /** Serve the task API (`/tasks…`); `gui serve` does not (default true). */
  taskApi?: boolean;
  /** Handlers replacing a route's (tests: an `/events` over a private hub). */
  overrides?: Record<string, Partial<Record<RouteMethod, Handler>>>;
  /** The routes to mount (default the manifest's; tests count or break their imports). */
  routes?: readonly RouteEntry[];
}

/**
 * The routes whose clients must not wait on an import for each call: an agent's or a worker's
 * claim, heartbeat and report, a tracker's delivery.
 */
const HOT = /^\/(tasks|workers|webhooks)(\/|$)/;

/** The app, and `warm()`: import the hot routes' handlers now. */
export type ServiceApp = Hono<AppEnv> & { warm(): Promise<void> };

/**
 * Imports made together: `join` a member's loader; the first call of any member, or `warm()`,
 * starts every member's import (each still {@link loadOnce}: a failed one is tried again by
 * the request that needs it, whose 500 names the cause).
 */
function importedTogether() {
  const members: (() => Promise<unknown>)[] = [];
  let warming: Promise<void> | undefined;
  const warm = () => warming ??= Promise.allSettled(members.map((load) => load())).then(() => {});
  const join = <T>(load: () => Promise<T>) => {
    members.push(load);
    return () => {
      const own = load();
      void warm();
      return own;
    };
  };
  return { join, warm };
}

/** Build the service's HTTP app over `ctx`. */
export function createApp(ctx: AppContext, options: AppOptions = {}): ServiceApp {
  const app = new Hono<AppEnv>();
  const hot = importedTogether();
  app.onError((err, c) => errorAnswer(err, c));
  app.notFound((c) =>
    c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404)
  );
  app.use("*", async (c, next) => {
    c.set("app", ctx);
    await next();
  });
  app.use("*", accessLogMiddleware(ctx));
  for (const route of options.routes ?? ROUTES) {
    if (options.taskApi === false && route.path.startsWith("/tasks")) continue;
    // One import per module, shared by its methods and by concurrent first requests.
    const own = loadOnce(route.load);
    const module = options.taskApi !== false && HOT.test(route.path) ? hot.join(own) : own;
    const override = options.overrides?.[route.path] ?? {};
    for (const method of routeMethods(route.policy)) {
      const handler = override[method] ?? lazyHandler(route, method, module);
      const chain = [...defences(ctx, route.policy, method), handler] as [Handler];
      app.on(method, route.path, ...chain);
      if (route.policy.trailingSlash) app.on(method, `${route.path}/`, ...chain);
    }
  }
  return Object.assign(app, { warm: hot.warm });
}

/** The middleware a route's policy asks for in front of one method's handler, in order. */
function defences(ctx: AppContext, policy: RoutePolicy, method: RouteMethod): MiddlewareHandler[] {
  const out: MiddlewareHandler[] = [];
  if (!policy.signedDelivery) {
    out.push(originGuard(ctx.origin ?? { bindHost: "127.0.0.1" }, {
      anyOrigin: policy.anyOrigin,
      navigable: method === "GET" && policy.access[method] === "public",
    }));
  }
  out.push(boundedBody({ limit: policy.bodyLimit, signedDelivery: policy.signedDelivery }));
  const access = policy.access[method];
  // A handler always has an access entry (routes/_manifest_test.ts); none would mean operator.
  if (access !== "public") {
    out.push(bearerAuth({
      specs: ctx.tokenSpecs,
      scope: access ?? "operator",
      queryToken: policy.queryToken,
    }));
  }
  return out;
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
