/**
 * POST /dashboard/review-board/tasks — an operator creates a task from the board
 * (`{"title", "role", "goal"?, "cli"?, "priority"?}`), signed on the audit chain first
 * (lib/operator/new_task.ts). 201 with the task, who created it, its audit entry's hash and
 * which run takes it; 400 for a malformed form, 409 for a broken audit chain, 422 for a role or
 * adapter service.yaml does not know — nothing is created or signed then.
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { readJsonBody } from "../../../lib/http/body.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { auditPaths } from "../../../lib/audit/store.ts";
import { BoardTaskSchema, createBoardTask } from "../../../lib/operator/new_task.ts";
import { whoRunsIt } from "../../../lib/runner/runs_it.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Create the task. */
export async function POST(c: Ctx): Promise<Response> {
  const input = parseBody(BoardTaskSchema, await readJsonBody(c));
  const app = c.get("app");
  const store = await taskStoreFor(app);
  const created = await createBoardTask({
    store,
    input,
    principal: c.get("principal"),
    audit: auditPaths(app.paths.audit),
    auditKey: app.auditKey,
    now: app.now,
  });
  return c.json({ ...created, runs_it: await whoRunsIt(app.paths, store.list()) }, 201);
}
