/** The task API mount (DESIGN.md §6): every /tasks route, behind bearer auth. */
import type { Hono } from "hono";
import { bearerAuth } from "../auth/middleware.ts";
import type { AppContext, AppEnv } from "../http/context.ts";
import * as tasks from "../../routes/tasks.ts";
import * as next from "../../routes/tasks/next.ts";
import * as task from "../../routes/tasks/[task_id].ts";
import * as claim from "../../routes/tasks/[task_id]/claim.ts";
import * as heartbeat from "../../routes/tasks/[task_id]/heartbeat.ts";
import * as complete from "../../routes/tasks/[task_id]/complete.ts";
import * as fail from "../../routes/tasks/[task_id]/fail.ts";
import * as cancel from "../../routes/tasks/[task_id]/cancel.ts";
import * as reopen from "../../routes/tasks/[task_id]/reopen.ts";
import * as retry from "../../routes/tasks/[task_id]/retry.ts";

/** Mount the task API on `app`. */
export function mountTaskApi(app: Hono<AppEnv>, ctx: AppContext): void {
  const auth = bearerAuth({ specs: ctx.tokenSpecs });
  app.use("/tasks", auth);
  app.use("/tasks/*", auth);
  app.get("/tasks", tasks.GET);
  app.post("/tasks", tasks.POST);
  app.post("/tasks/next", next.POST);
  app.get("/tasks/:task_id", task.GET);
  app.post("/tasks/:task_id/claim", claim.POST);
  app.post("/tasks/:task_id/heartbeat", heartbeat.POST);
  app.post("/tasks/:task_id/complete", complete.POST);
  app.post("/tasks/:task_id/fail", fail.POST);
  app.post("/tasks/:task_id/cancel", cancel.POST);
  app.post("/tasks/:task_id/reopen", reopen.POST);
  app.post("/tasks/:task_id/retry", retry.POST);
}
