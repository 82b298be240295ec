/** POST /tasks/<id>/cancel — operator only; any non-terminal task becomes CANCELLED. */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody, ReasonBodySchema } from "../../../lib/tasks/http_input.ts";
import { requireOperator } from "../../../lib/tasks/operator.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { journalOperatorChange, reapCancelled } from "../../../lib/orchestrator/task_control.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Cancel one task; tasks blocked only on it become OPEN. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(ReasonBodySchema, await readOptionalJsonObject(c));
  requireOperator(c, "cancel a task");
  const app = c.get("app");
  const store = await taskStoreFor(app);
  const task = await store.cancel(id, body.reason ?? body.summary);
  // Its run's board shows it even when no run is live to journal it (a live one does so itself).
  // …and its worktree is reaped, its work kept (a live run reaps its own).
  // A run whose journal does not verify refuses the row: the answer says so (`not_journaled`).
  const { journaled, refused } = await journalOperatorChange(app.paths.root, "cancel", task);
  if (journaled || refused) {
    await reapCancelled(app.paths.root, task); // what it kept, `service doctor` lists
  }
  return c.json(refused ? { ...task, not_journaled: refused } : task);
}
