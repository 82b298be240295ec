/** POST /workers/<name>/cordon — an operator cordons the worker: it gets no task until uncordoned (its running agents go on). */
import type { Ctx } from "../../../lib/http/context.ts";
import { readOptionalJsonObject } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { loadConfig } from "../../../lib/config/load.ts";
import { registryFor } from "../../../lib/workers/registry.ts";
import { actOnWorker, CordonBodySchema } from "../../../lib/workers/operator.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "operator" });

/** Cordon the worker; its new state. */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const body = parseBody(CordonBodySchema, await readOptionalJsonObject(c));
  const app = c.get("app");
  const registry = await registryFor(app.paths.root);
  const worker = actOnWorker(registry, "cordon", name, {
    by: c.get("principal").principal,
    reason: body.reason,
    now: Date.now(),
    timeoutS: (await loadConfig(app.paths.root))?.heartbeat_timeout_s ?? 45,
  });
  await registry.flushed();
  return c.json({ worker });
}
