/** GET /review-board/runs/<run_id> — the board projection receipt (spec §2.3). */
import type { Ctx } from "../../../lib/http/context.ts";
import { requireRunJournal } from "../../../lib/runs/runs.ts";
import { projectJournal } from "../../../lib/board/projection.ts";

/** Fold the journal now and answer the receipt; `ETag` is the projection hash. */
export async function GET(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const path = await requireRunJournal(c.get("app").paths, runId);
  const { receipt } = await projectJournal(runId, path);
  c.header("ETag", `"${receipt.projection_hash}"`);
  c.header("Cache-Control", "no-store");
  return c.json(receipt);
}
