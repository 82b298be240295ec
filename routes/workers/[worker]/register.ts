/**
 * POST /workers/<name>/register — a worker says it exists, with its slots, roles and the adapters
 * it can start; the sessions its name held are handed back (a new process holds none).
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { readJsonBody } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import {
  heartbeatIntervalS,
  type RegisterAnswer,
  RegisterBodySchema,
} from "../../../lib/workers/protocol.ts";
import { registryFor } from "../../../lib/workers/registry.ts";
import { rosterFor } from "../../../lib/workers/roster.ts";
import { deskFor } from "../../../lib/workers/desk.ts";
import { loadConfig } from "../../../lib/config/load.ts";
import { admitWorker } from "../../../lib/workers/admission.ts";
import { ConflictError } from "../../../lib/errors.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Register: answers the run served now and the lease's timing. */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const body = parseBody(RegisterBodySchema, await readJsonBody(c));
  const app = c.get("app");
  admitWorker(app);
  const desk = deskFor(app.paths.root);
  // Two live processes under one name: the second would take the first's leases as if it had
  // restarted. It is refused until the first's heartbeats stop (a restart hands its back).
  const held = desk?.liveElsewhere?.(name, body.left ?? []) ?? [];
  if (held.length > 0) {
    throw new ConflictError(
      "worker_name_in_use",
      `worker ${name} is running elsewhere: its process renewed session(s) ${held.join(", ")} ` +
        "within the last heartbeat, so this process may not register under its name; give each " +
        "machine its own --name (this one is taken once the other stops heartbeating)",
    );
  }
  const principal = c.get("principal");
  const roster = rosterFor(app.paths.root);
  roster.heard(name, principal, { free: body.slots, draining: false });
  const timeout = (await loadConfig(app.paths.root))?.heartbeat_timeout_s ?? 45;
  roster.setLease(timeout);
  // What it offers (and lacks) is remembered for `service workers`, the scheduler and the claims.
  const record = (await registryFor(app.paths.root)).register(name, body, {
    principal: principal.principal,
    now: Date.now(),
  });
  desk?.registered?.(name, record, body.left ?? []);
  const answer: RegisterAnswer = {
    name,
    run_id: desk?.runId ?? null,
    heartbeat_timeout_s: timeout,
    heartbeat_interval_s: heartbeatIntervalS(timeout),
    ...(app.agentUrl ? { agent_port: Number(new URL(app.agentUrl).port) } : {}),
    ...(record.cordoned ? { cordoned: record.cordoned.reason } : {}),
    ...(record.draining ? { drain: true } : {}),
  };
  return c.json(answer);
}
