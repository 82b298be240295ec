/** GET /review-board/runs — every run, newest first. */
import type { Ctx } from "../../lib/http/context.ts";
import { listRuns } from "../../lib/runs/runs.ts";

/** List runs with their head and envelope. */
export async function GET(c: Ctx): Promise<Response> {
  return c.json({ runs: await listRuns(c.get("app").paths) });
}
