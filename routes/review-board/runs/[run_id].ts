/** GET /review-board/runs/<run_id> — the board projection receipt (spec §2.3). */
import type { Ctx } from "../../../lib/http/context.ts";
import { requireRunJournal } from "../../../lib/runs/runs.ts";
import { projectJournalServed, servedReceipt } from "../../../lib/board/projection.ts";
import { journalContradiction } from "../../../lib/audit/workspace_check.ts";
import { largeBody } from "../../../lib/http/large_body.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/**
 * Fold the journal (or prove by its identity that the last fold still holds) and answer the
 * receipt's canonical bytes; a matching `If-None-Match` gets 304 without them. The receipt is
 * unverified also when the signed audit chain contradicts a re-hashed journal.
 */
export async function GET(c: Ctx): Promise<Response> {
  const runId = c.req.param("run_id")!;
  const paths = c.get("app").paths;
  const path = await requireRunJournal(paths, runId);
  const { projection, served: asFolded } = await projectJournalServed(runId, path);
  let served = asFolded;
  const headers: Record<string, string> = { "Cache-Control": "no-cache" };
  if (projection.receipt.journal_verified) {
    const contradiction = await journalContradiction(paths, runId, path);
    if (contradiction) {
      headers["X-Journal-Fault"] = contradiction.message.replace(/[^\x20-\x7e]/g, "?");
      served = servedReceipt({
        ...projection,
        receipt: { ...projection.receipt, journal_verified: false },
      });
    }
  }
  headers["ETag"] = served.etag;
  const wanted = c.req.header("If-None-Match");
  if (wanted && wanted.split(",").some((tag) => tag.trim() === served.etag)) {
    return new Response(null, { status: 304, headers });
  }
  return new Response(largeBody(served.parts), {
    headers: {
      ...headers,
      "Content-Type": "application/json; charset=UTF-8",
      "Content-Length": String(served.length),
    },
  });
}
