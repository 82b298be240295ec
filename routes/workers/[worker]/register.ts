/** POST /workers/<name>/register — a worker says it exists, with its slots and roles. */
import type { Ctx } from "../../../lib/http/context.ts";
import { readJsonBody } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { heartbeatIntervalS, RegisterBodySchema } from "../../../lib/workers/protocol.ts";
import { rosterFor } from "../../../lib/workers/roster.ts";
import { deskFor } from "../../../lib/workers/desk.ts";
import { loadConfig } from "../../../lib/config/load.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Register: answers the run served now and the lease's timing. */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const body = parseBody(RegisterBodySchema, await readJsonBody(c));
  const app = c.get("app");
  const roster = rosterFor(app.paths.root);
  roster.heard(name, c.get("principal"), { free: body.slots, draining: false });
  const timeout = (await loadConfig(app.paths.root))?.heartbeat_timeout_s ?? 45;
  roster.setLease(timeout);
  return c.json({
    name,
    run_id: deskFor(app.paths.root)?.runId ?? null,
    heartbeat_timeout_s: timeout,
    heartbeat_interval_s: heartbeatIntervalS(timeout),
    ...(app.agentUrl ? { agent_port: Number(new URL(app.agentUrl).port) } : {}),
  });
}
