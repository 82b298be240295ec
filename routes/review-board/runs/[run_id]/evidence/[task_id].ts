/**
 * GET /review-board/runs/<run_id>/evidence/<task_id> — the sealed evidence bundle with
 * `bundle_hash` recomputed and `verified` (spec §2.5). 404 `no_evidence_producers` when the task
 * declared none, 404 `evidence_not_sealed` when it declared some but nothing is sealed yet.
 */
import type { Ctx } from "../../../../../lib/http/context.ts";
import { HttpError } from "../../../../../lib/http/errors.ts";
import { requireRunJournal } from "../../../../../lib/runs/runs.ts";
import { EvidenceNotFoundError, readEvidence } from "../../../../../lib/review/evidence.ts";
import { requireId } from "../../../../../lib/ids.ts";
import { routePolicy } from "../../../../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** Serve the bundle; an edited bundle, output or journal answers `verified: false`. */
export async function GET(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const taskId = requireId("task_id", c.req.param("task_id")!);
  const app = c.get("app");
  await requireRunJournal(app.paths, runId);
  c.header("Cache-Control", "no-store");
  try {
    return c.json(await readEvidence(app.paths, runId, taskId));
  } catch (e) {
    if (e instanceof EvidenceNotFoundError) throw new HttpError(404, e.code, e.message);
    throw e;
  }
}
