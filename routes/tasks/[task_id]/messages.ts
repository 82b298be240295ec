/**
 * GET /tasks/<id>/messages[?after=N] — the follow-ups operators sent this task's agent from the
 * board (lib/operator/follow_ups.ts), oldest first; `after` leaves out those already read. An
 * agent reads its own task's only, while its session holds it (403 otherwise).
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { requireId } from "../../../lib/ids.ts";
import { NotFoundError } from "../../../lib/errors.ts";
import { HttpError } from "../../../lib/http/errors.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { readFollowUps } from "../../../lib/operator/follow_ups.ts";
import { agentSession } from "../../../lib/tasks/agent_guard.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";

/** Who may read them: the task's own agent (its credential), a worker, an operator. */
export const policy = routePolicy({ GET: "agent" });

/** The follow-ups after `?after=` (default: all). */
export async function GET(c: Ctx): Promise<Response> {
  const id = requireId("task_id", c.req.param("task_id")!);
  const raw = c.req.query("after") ?? "0";
  if (!/^\d{1,9}$/.test(raw)) {
    throw new HttpError(
      400,
      "invalid_after",
      `after must be the number of the last follow-up read (0-999999999), not ${
        JSON.stringify(raw.slice(0, 40))
      }`,
    );
  }
  const app = c.get("app");
  const task = (await taskStoreFor(app)).get(id);
  if (!task) throw new NotFoundError("unknown_task", `no task ${id}`);
  agentSession(c, task);
  return c.json({ messages: await readFollowUps(app.paths, id, Number(raw)) });
}
