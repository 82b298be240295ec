/**
 * The router: one line per URL path, each handled by the module that mirrors it under routes/.
 */
import { Hono } from "hono";
import { bearerAuth, requireScope } from "../lib/auth/middleware.ts";
import type { AppContext, AppEnv } from "../lib/http/context.ts";
import { errorBody, HttpError } from "../lib/http/errors.ts";
import { originGuard } from "../lib/http/origin_guard.ts";
import { boundedBodies } from "../lib/http/body_limit.ts";
import * as runs from "./review-board/runs.ts";
import * as run from "./review-board/runs/[run_id].ts";
import * as diff from "./review-board/runs/[run_id]/diff/[task_id].ts";
import * as evidence from "./review-board/runs/[run_id]/evidence/[task_id].ts";
import * as tasks from "./review-board/runs/[run_id]/tasks.ts";
import * as task from "./review-board/runs/[run_id]/tasks/[task_id].ts";
import * as review from "./dashboard/review-board/runs/[run_id]/tasks/[task_id]/review.ts";
import * as status from "./status.ts";

/** Extra route groups mounted by other subsystems (task API, board page, webhooks, events). */
export type RouteMount = (app: Hono<AppEnv>, ctx: AppContext) => void;

/** Options of {@link createApp}. */
export interface CreateAppOptions {
  /** Mounted before the authenticated JSON routes (public pages, webhooks). */
  publicRoutes?: RouteMount[];
  /** Mounted behind bearer auth. */
  routes?: RouteMount[];
}

/** Build the service's HTTP app over `ctx`. */
export function createApp(ctx: AppContext, options: CreateAppOptions = {}): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.onError((err, c) => {
    if (err instanceof HttpError) {
      for (const [k, v] of Object.entries(err.headers)) c.header(k, v);
      return c.json(errorBody(err.code, err.message), err.status as 400);
    }
    console.error(err);
    return c.json(errorBody("internal_error", `internal error: ${(err as Error).message}`), 500);
  });
  app.notFound((c) =>
    c.json(errorBody("not_found", `no route for ${c.req.method} ${c.req.path}`), 404)
  );
  app.use("*", async (c, next) => {
    c.set("app", ctx);
    await next();
  });
  // Browser defences first, before any route (and any body) is looked at: docs/security.md.
  app.use("*", originGuard(ctx.origin ?? { bindHost: "127.0.0.1" }));
  app.use("*", boundedBodies());
  for (const mount of options.publicRoutes ?? []) mount(app, ctx);

  const auth = bearerAuth({ specs: ctx.tokenSpecs });
  app.use("/review-board/*", auth);
  app.use("/dashboard/review-board/runs/*", auth, requireScope("operator"));
  app.use("/status", auth);
  app.use("/status/", auth);

  app.get("/review-board/runs", runs.GET);
  app.get("/review-board/runs/:run_id", run.GET);
  app.get("/review-board/runs/:run_id/diff/:task_id", diff.GET);
  app.get("/review-board/runs/:run_id/evidence/:task_id", evidence.GET);
  app.get("/review-board/runs/:run_id/tasks", tasks.GET);
  app.get("/review-board/runs/:run_id/tasks/:task_id", task.GET);
  app.post("/dashboard/review-board/runs/:run_id/tasks/:task_id/review", review.POST);
  app.get("/status", status.GET);
  app.get("/status/", status.GET);
  for (const mount of options.routes ?? []) mount(app, ctx);
  return app;
}
