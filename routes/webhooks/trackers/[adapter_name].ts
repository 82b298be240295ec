/**
 * POST /webhooks/trackers/<adapter_name>: a tracker's signed delivery (spec §3.4, §4.2, §5: no
 * bearer token; the per-tracker shared-secret check authenticates it). The receiver reads the
 * raw body itself, bounded at 5 MiB.
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { trackerServiceFor } from "../../../lib/trackers/service.ts";

/** Verify, de-duplicate and feed one delivery. */
export async function POST(c: Ctx): Promise<Response> {
  const service = await trackerServiceFor(c.get("app"));
  const outcome = await service.receiver.receive(c.req.param("adapter_name") ?? "", c.req.raw);
  return c.json(outcome.body, outcome.status);
}
