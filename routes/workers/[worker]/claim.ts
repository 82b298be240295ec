/**
 * POST /workers/<name>/claim — up to `free` tasks for the worker (200 with orders, or 204). With
 * a one-time `ticket` (a Kubernetes Job's pod, DESIGN.md §17): the ticket's task only, once; an
 * unknown ticket is 403, a used, expired or other run's one 409, and no live run 503. A cordoned
 * worker gets nothing (204); a drained one is told so (`drain: true`, `service workers drain`).
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { readJsonBody } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { ClaimBodySchema } from "../../../lib/workers/protocol.ts";
import { rosterFor } from "../../../lib/workers/roster.ts";
import { deskFor } from "../../../lib/workers/desk.ts";
import { registryFor } from "../../../lib/workers/registry.ts";
import { mayClaim, workerSlots } from "../../../lib/workers/fleet.ts";
import { DomainError } from "../../../lib/errors.ts";
import { admitWorker } from "../../../lib/workers/admission.ts";
import { sessionsHeldBy } from "../../../lib/workers/running_count.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Claim: the live run decides (no run live: 204, ask again later). */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const body = parseBody(ClaimBodySchema, await readJsonBody(c));
  const app = c.get("app");
  admitWorker(app);
  const principal = c.get("principal");
  const roster = rosterFor(app.paths.root);
  roster.heard(name, principal);
  const registry = await registryFor(app.paths.root);
  // What it runs, from the store's leases on its name (a worker whose last agent reported sends
  // no heartbeat that would say it runs nothing).
  const running = sessionsHeldBy((await taskStoreFor(app)).list(), name);
  registry.seen(name, Date.now(), { free: body.free, running });
  const record = registry.get(name);
  // A cordoned or draining worker gets nothing (`service workers`); a draining one is told.
  if (record?.draining) {
    roster.heard(name, principal, { draining: true });
    return c.json({ orders: [], drain: true });
  }
  if (!mayClaim(record)) return c.body(null, 204);
  const desk = deskFor(app.paths.root);
  if (!desk && body.ticket) {
    // A Job's pod keeps its one ticket for the run that minted it (restarting): ask again.
    throw new DomainError(
      "unavailable",
      "no_live_run",
      "no run is live to take this claim ticket; the worker asks again",
      { "Retry-After": "2" },
    );
  }
  const offer = record && workerSlots([record])[0];
  const orders = desk
    ? await desk.claim(name, body, offer?.adapters ? { adapters: offer.adapters } : undefined)
    : [];
  roster.heard(name, principal, { free: body.free - orders.length });
  // What it took is no longer free: `status`, `service workers`, /metrics and the wait reasons
  // read this until its next claim, which a worker with every slot busy does not send.
  if (orders.length > 0) {
    registry.seen(name, Date.now(), {
      free: body.free - orders.length,
      running: running + orders.length,
    });
  }
  if (orders.length === 0) return c.body(null, 204);
  return c.json({ orders });
}
