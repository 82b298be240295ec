/**
 * POST /tasks/<id>/complete — body optional: `{"summary", "tests_run", "quality_gates_run",
 * "completion_signals_checked"}`; `{"operator": true}` (operator scope) completes any
 * non-terminal task; one nobody worked on is then DONE for good with nothing to merge. 409 once
 * DONE or CLOSED.
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { CompleteBodySchema, parseBody } from "../../../lib/tasks/http_input.ts";
import { requireOperator } from "../../../lib/tasks/operator.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { journalOperatorChange } from "../../../lib/orchestrator/task_control.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { refuseRunTaskToWorker } from "../../../lib/workers/task_api_guard.ts";
import { completionVerdict } from "../../../lib/verification/verdict.ts";
import { agentSession } from "../../../lib/tasks/agent_guard.ts";

/**
 * Who may call it: the agent of this task (its own session only), a worker, an operator;
 * `{"operator": true}` needs scope operator, which the handler checks (it depends on the body).
 */
export const policy = routePolicy({ POST: "agent" });

/** Complete one task. */
export async function POST(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const body = parseBody(CompleteBodySchema, await readOptionalJsonObject(c));
  if (body.operator) requireOperator(c, "complete a task as operator");
  const app = c.get("app");
  const store = await taskStoreFor(app);
  refuseRunTaskToWorker(c, store.get(id), "complete");
  const session = agentSession(c, store.get(id), body.session_id);
  const task = await store.complete(
    id,
    session === undefined ? body : { ...body, session_id: session },
    completionVerdict(app.paths, session),
  );
  // Settled by an operator with nothing to land: its run's board shows it even when no run is
  // live to journal it (a live one does so itself).
  const refused = task.operator_done
    ? (await journalOperatorChange(app.paths.root, "complete", task)).refused
    : undefined;
  return c.json(refused ? { ...task, not_journaled: refused } : task);
}
