/** GET /review-board/runs/<run_id>/diff/<task_id> — the stored diff, re-hashed (spec §2.4). */
import type { Ctx } from "../../../../../lib/http/context.ts";
import { requireRunJournal } from "../../../../../lib/runs/runs.ts";
import { readReviewedDiff } from "../../../../../lib/review/diff.ts";
import { requireId } from "../../../../../lib/ids.ts";
import { routePolicy } from "../../../../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** Serve the diff with `verified` true only when its bytes match the chained hash. */
export async function GET(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const taskId = requireId("task_id", c.req.param("task_id")!);
  const app = c.get("app");
  const journal = await requireRunJournal(app.paths, runId);
  c.header("Cache-Control", "no-store");
  return c.json(await readReviewedDiff(app.paths, { runId, taskId, journal }));
}
