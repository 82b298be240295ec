/** POST /tasks/<id>/retry — operator only; a FAILED or CANCELLED task gets new attempts. */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody, ReasonBodySchema } from "../../../lib/tasks/http_input.ts";
import { requireOperator } from "../../../lib/tasks/operator.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { journalOperatorChange } from "../../../lib/orchestrator/task_control.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Retry one task: OPEN again (BLOCKED while a dependency is unsatisfied), attempts reset. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(ReasonBodySchema, await readOptionalJsonObject(c));
  requireOperator(c, "retry a task");
  const app = c.get("app");
  const store = await taskStoreFor(app);
  const task = await store.retry(id, body.reason ?? body.summary);
  // Its run's board shows it even when no run is live to journal it (a live one does so itself).
  // A run whose journal does not verify refuses the row: the answer says so (`not_journaled`).
  const { refused } = await journalOperatorChange(app.paths.root, "retry", task);
  return c.json(refused ? { ...task, not_journaled: refused } : task);
}
