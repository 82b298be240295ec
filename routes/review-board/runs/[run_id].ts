/** GET /review-board/runs/<run_id> — the board projection receipt (spec §2.3). */
import type { Ctx } from "../../../lib/http/context.ts";
import { requireRunJournal } from "../../../lib/runs/runs.ts";
import { projectJournalServed } from "../../../lib/board/projection.ts";

/**
 * Fold the journal (or prove by its identity that the last fold still holds) and answer the
 * receipt's canonical bytes; a matching `If-None-Match` gets 304 without them.
 */
export async function GET(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const path = await requireRunJournal(c.get("app").paths, runId);
  const { served } = await projectJournalServed(runId, path);
  const headers = { "ETag": served.etag, "Cache-Control": "no-cache" };
  const wanted = c.req.header("If-None-Match");
  if (wanted && wanted.split(",").some((tag) => tag.trim() === served.etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(served.body, {
    headers: { ...headers, "Content-Type": "application/json; charset=UTF-8" },
  });
}
