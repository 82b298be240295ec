/** POST /workers/<name>/claim — up to `free` tasks for the worker (200 with orders, or 204). */
import type { Ctx } from "../../../lib/http/context.ts";
import { readJsonBody } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { ClaimBodySchema } from "../../../lib/workers/protocol.ts";
import { bindWorkerName } from "../../../lib/workers/leases.ts";
import { deskFor } from "../../../lib/workers/desk.ts";
import { registryFor } from "../../../lib/workers/registry.ts";
import { mayClaim, workerSlots } from "../../../lib/workers/fleet.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Claim: the live run decides (no run live: 204, ask again later). */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const body = parseBody(ClaimBodySchema, await readJsonBody(c));
  const app = c.get("app");
  bindWorkerName(app, name, c.get("principal"));
  const registry = await registryFor(app.paths.root);
  registry.seen(name, Date.now(), { free: body.free });
  const record = registry.get(name);
  // A cordoned or draining worker gets nothing (`service workers`); a draining one is told.
  if (record?.draining) return c.json({ orders: [], drain: true });
  if (!mayClaim(record)) return c.body(null, 204);
  const desk = deskFor(app.paths.root);
  const offer = record && workerSlots([record])[0];
  const orders = desk
    ? await desk.claim(
      name,
      body,
      offer?.adapters ? { adapters: offer.adapters } : undefined,
    )
    : [];
  if (orders.length === 0) return c.body(null, 204);
  return c.json({ orders });
}
