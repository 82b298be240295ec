/**
 * POST /workers/<name>/sessions/<session>/report — with the capability the session's claim
 * carried: an agent ended on the worker, whose branch `agent/<session>` is pushed at `commit`.
 * 409 when the session's lease is gone (nothing lands twice); 503 while no run is live (the
 * orchestrator restarts: report again).
 */
import type { Ctx } from "../../../../../lib/http/context.ts";
import { readJsonBody } from "../../../../../lib/http/body.ts";
import { requireId } from "../../../../../lib/ids.ts";
import { parseBody } from "../../../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../../../lib/http/route_policy.ts";
import { taskStoreFor } from "../../../../../lib/tasks/registry.ts";
import { DomainError } from "../../../../../lib/errors.ts";
import { REPORT_BODY_LIMIT, ReportBodySchema } from "../../../../../lib/workers/protocol.ts";
import { requireLease } from "../../../../../lib/workers/leases.ts";
import { deskFor } from "../../../../../lib/workers/desk.ts";
import { rosterFor } from "../../../../../lib/workers/roster.ts";
import { registryFor } from "../../../../../lib/workers/registry.ts";
import { sessionOfCapability } from "../../../../../lib/workers/session_route.ts";
import { sessionsHeldBy } from "../../../../../lib/workers/running_count.ts";

/** What this URL requires: the session's capability, with room for the session log. */
export const policy = routePolicy({ POST: "session" }, { bodyLimit: REPORT_BODY_LIMIT });

/** Report one session's end. */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const sessionId = requireId("session_id", c.req.param("session_id")!);
  const body = parseBody(ReportBodySchema, await readJsonBody(c, REPORT_BODY_LIMIT));
  sessionOfCapability(c.get("principal"), body.task_id, body.session_id);
  const app = c.get("app");
  rosterFor(app.paths.root).touched(name);
  const registry = await registryFor(app.paths.root);
  registry.seen(name, Date.now());
  const store = await taskStoreFor(app);
  requireLease(store, name, body.task_id, sessionId);
  const desk = deskFor(app.paths.root);
  if (!desk) {
    throw new DomainError(
      "unavailable",
      "no_live_run",
      "no run is live to land this work; the worker reports again",
      { "Retry-After": "2" },
    );
  }
  const answer = await desk.report(name, body);
  // Its slot is free again (its next claim says exactly how many are); this session no longer
  // runs there, whatever its task's status now.
  const rec = registry.get(name);
  if (rec) {
    registry.seen(name, Date.now(), {
      free: Math.min(rec.slots, rec.free + 1),
      running: sessionsHeldBy(store.list(), name, body.task_id),
    });
  }
  return c.json(answer);
}
