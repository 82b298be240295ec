/**
 * POST /workers/<name>/sessions/<session>/heartbeat — with the capability the session's claim
 * carried: renews the session's lease and answers whether its agent goes on (a lost lease, a
 * cancel, a timeout or a reported task's grace ending say stop), and whether an operator drains
 * the worker (`drain: true`: it claims nothing more and ends once its agents are done).
 */
import type { Ctx } from "../../../../../lib/http/context.ts";
import { readJsonBody } from "../../../../../lib/http/body.ts";
import { requireId } from "../../../../../lib/ids.ts";
import { parseBody } from "../../../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../../../lib/http/route_policy.ts";
import { taskStoreFor } from "../../../../../lib/tasks/registry.ts";
import { ACTIVE } from "../../../../../lib/tasks/lifecycle.ts";
import { sessionsHeldBy } from "../../../../../lib/workers/running_count.ts";
import { type HeartbeatAnswer, HeartbeatBodySchema } from "../../../../../lib/workers/protocol.ts";
import { leaseOf } from "../../../../../lib/workers/leases.ts";
import { deskFor } from "../../../../../lib/workers/desk.ts";
import { rosterFor } from "../../../../../lib/workers/roster.ts";
import { registryFor } from "../../../../../lib/workers/registry.ts";
import { sessionOfCapability } from "../../../../../lib/workers/session_route.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "session" });

/** Heartbeat one session. */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const sessionId = requireId("session_id", c.req.param("session_id")!);
  const body = parseBody(HeartbeatBodySchema, await readJsonBody(c));
  const app = c.get("app");
  sessionOfCapability(c.get("principal"), body.task_id);
  rosterFor(app.paths.root).touched(name, { draining: body.draining });
  const store = await taskStoreFor(app);
  const registry = await registryFor(app.paths.root);
  // `service workers` shows the sessions it holds (the store's leases on its name).
  registry.seen(name, Date.now(), { running: sessionsHeldBy(store.list(), name) });
  // An operator's drain is delivered here: the worker claims nothing more and ends when done.
  const drain = registry.get(name)?.draining ? { drain: true } : {};
  const desk = deskFor(app.paths.root);
  const pick = { task_id: body.task_id, session_id: sessionId };
  const lease = leaseOf(store.get(body.task_id), name, sessionId);
  if (!lease.held) {
    const gone: HeartbeatAnswer = { ...pick, keep: false, reason: lease.reason, ...drain };
    return c.json(gone);
  }
  if (ACTIVE.has(lease.task.status)) {
    // It may have moved meanwhile (reported, orphaned): the next heartbeat tells.
    await store.heartbeat(body.task_id).catch(() => {});
  }
  desk?.touched(name, body.task_id, sessionId, body.pushed);
  const end = desk?.ending(sessionId) ??
    (lease.task.status === "CANCELLED" ? "cancelled" : undefined);
  const verdict: HeartbeatAnswer = end
    ? { ...pick, keep: false, reason: end, ...drain }
    : { ...pick, keep: true, ...drain };
  return c.json(verdict);
}
