/** GET /review-board/runs/<run_id> — the board projection receipt (spec §2.3). */
import type { Ctx } from "../../../lib/http/context.ts";
import { requireRunJournal } from "../../../lib/runs/runs.ts";
import { attestedProjection } from "../../../lib/audit/workspace_check.ts";

/** Fold the journal now and answer the receipt; `ETag` is the projection hash. */
export async function GET(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const paths = c.get("app").paths;
  const path = await requireRunJournal(paths, runId);
  // Unverified also when the signed audit chain contradicts a re-hashed journal.
  const { receipt, contradiction } = await attestedProjection(paths, runId, path);
  if (contradiction) {
    c.header("X-Journal-Fault", contradiction.message.replace(/[^\x20-\x7e]/g, "?"));
  }
  c.header("ETag", `"${receipt.projection_hash}"`);
  c.header("Cache-Control", "no-store");
  return c.json(receipt);
}
