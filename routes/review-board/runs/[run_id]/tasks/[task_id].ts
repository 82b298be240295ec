/** GET /review-board/runs/<run_id>/tasks/<task_id> — attempts, reasons, summaries, log tails. */
import type { Ctx } from "../../../../../lib/http/context.ts";
import { taskDetail } from "../../../../../lib/review/activity.ts";
import { routePolicy } from "../../../../../lib/http/route_policy.ts";
import { detailFor } from "../../../../../lib/review/agent_view.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** The task detail a reviewer reads beside the diff and the evidence. */
export async function GET(c: Ctx): Promise<Response> {
  c.header("Cache-Control", "no-store");
  const detail = await taskDetail(
    c.get("app").paths,
    c.req.param("run_id")!,
    c.req.param("task_id")!,
  );
  // An agent's credential reads no other task's session log (lib/review/agent_view.ts).
  return c.json(detailFor(c.get("principal"), detail));
}
