/**
 * POST /dashboard/review-board/tasks/<task_id>/follow-up — an operator's follow-up to a running
 * task's agent (`{"text": "…"}`): signed on the audit chain, kept for the agent, journaled in the
 * task's run (lib/operator/follow_ups.ts). 404 for a task the store does not have, 409 for one
 * that is not running, 400 for an empty, too long or control-character text.
 */
import { z } from "zod";
import type { Ctx } from "../../../../../lib/http/context.ts";
import { requireId } from "../../../../../lib/ids.ts";
import { readJsonBody } from "../../../../../lib/http/body.ts";
import { HttpError } from "../../../../../lib/http/errors.ts";
import { routePolicy } from "../../../../../lib/http/route_policy.ts";
import { parseBody } from "../../../../../lib/tasks/http_input.ts";
import { taskStoreFor } from "../../../../../lib/tasks/registry.ts";
import { NotFoundError } from "../../../../../lib/errors.ts";
import { auditPaths } from "../../../../../lib/audit/store.ts";
import { journalPath } from "../../../../../lib/workspace.ts";
import {
  followUpTextProblem,
  requireRunning,
  sendFollowUp,
} from "../../../../../lib/operator/follow_ups.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

const Body = z.strictObject({ text: z.string() });

/** Send the follow-up; 201 with it, who sent it, its audit entry's hash and how it is read. */
export async function POST(c: Ctx): Promise<Response> {
  const taskId = requireId("task_id", c.req.param("task_id")!);
  const { text: raw } = parseBody(Body, await readJsonBody(c));
  const problem = followUpTextProblem(raw);
  if (problem) throw new HttpError(400, "invalid_follow_up", problem);
  const text = raw.trim();
  const app = c.get("app");
  const task = (await taskStoreFor(app)).get(taskId);
  if (!task) throw new NotFoundError("unknown_task", `no task ${taskId}`);
  requireRunning(task);
  const runJournal = task.run_id ? journalPath(app.paths, task.run_id) : undefined;
  const journaled = runJournal !== undefined &&
    await Deno.stat(runJournal).then(() => true, () => false);
  const principal = c.get("principal");
  const sent = await sendFollowUp({
    paths: app.paths,
    taskId,
    ...(journaled ? { runJournal } : {}),
    text,
    principal,
    audit: auditPaths(app.paths.audit),
    auditKey: app.auditKey,
    now: app.now,
  });
  return c.json({
    ...sent,
    principal: principal.principal,
    scope: principal.scope,
    delivery: `sent to the agent of ${taskId}: it reads it at GET /tasks/${taskId}/messages ` +
      "when it next looks (its prompt says to after each step), and every later attempt's " +
      "prompt carries it",
  }, 201);
}
