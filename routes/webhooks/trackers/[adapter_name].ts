/**
 * POST /webhooks/trackers/<adapter_name>: a tracker's signed delivery (spec §3.4, §4.2, §5: no
 * bearer token; the per-tracker shared-secret check authenticates it). The raw body bytes come
 * from the app's body bound (5 MiB for this path), read once.
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { trackerServiceFor } from "../../../lib/trackers/service.ts";
import { MAX_WEBHOOK_BODY } from "../../../lib/http/body_limit.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";

/**
 * Who may call it: anyone, with no bearer token; each delivery is authenticated by its
 * tracker's signature instead (spec §5), and its raw bytes reach the handler.
 */
export const policy = routePolicy({ POST: "public" }, {
  signedDelivery: true,
  bodyLimit: MAX_WEBHOOK_BODY,
});

const EMPTY = new Uint8Array(0);

/** Verify, de-duplicate and feed one delivery. */
export async function POST(c: Ctx): Promise<Response> {
  const service = await trackerServiceFor(c.get("app"));
  const outcome = await service.receiver.receive(
    c.req.param("adapter_name") ?? "",
    c.req.raw.headers,
    c.get("deliveryBody") ?? EMPTY,
  );
  return c.json(outcome.body, outcome.status);
}
