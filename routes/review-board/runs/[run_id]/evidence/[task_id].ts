/** GET /review-board/runs/<run_id>/evidence/<task_id> — the evidence bundle (spec §2.5). */
import type { Ctx } from "../../../../../lib/http/context.ts";
import { requireRunJournal } from "../../../../../lib/runs/runs.ts";
import { readEvidence } from "../../../../../lib/review/evidence.ts";
import { requireId } from "../../../../../lib/ids.ts";

/** Serve the bundle with its recomputed `bundle_hash`; 404 when no producers were declared. */
export async function GET(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const taskId = requireId("task_id", c.req.param("task_id")!);
  const app = c.get("app");
  await requireRunJournal(app.paths, runId);
  return c.json(await readEvidence(app.paths, runId, taskId));
}
