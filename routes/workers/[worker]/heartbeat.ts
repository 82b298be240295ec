/**
 * POST /workers/<name>/heartbeat — renews the lease of every session the worker names and
 * answers, per session, whether its agent goes on (a lost lease, a cancel, a timeout or a
 * reported task's grace ending say stop).
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { readJsonBody } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { taskStoreFor } from "../../../lib/tasks/registry.ts";
import { ACTIVE } from "../../../lib/tasks/lifecycle.ts";
import {
  type HeartbeatAnswer,
  HeartbeatBodySchema,
  type SessionVerdict,
} from "../../../lib/workers/protocol.ts";
import { registryFor } from "../../../lib/workers/registry.ts";
import { bindWorkerName, leaseOf } from "../../../lib/workers/leases.ts";
import { deskFor } from "../../../lib/workers/desk.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Heartbeat every session the worker holds. */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const body = parseBody(HeartbeatBodySchema, await readJsonBody(c));
  const app = c.get("app");
  bindWorkerName(app, name, c.get("principal"));
  const store = await taskStoreFor(app);
  const registry = await registryFor(app.paths.root);
  registry.seen(name, Date.now(), { running: body.sessions.length });
  const desk = deskFor(app.paths.root);
  const sessions: SessionVerdict[] = [];
  for (const s of body.sessions) {
    const lease = leaseOf(store.get(s.task_id), name, s.session_id);
    if (!lease.held) {
      sessions.push({ ...pick(s), keep: false, reason: lease.reason });
      continue;
    }
    if (ACTIVE.has(lease.task.status)) {
      // It may have moved meanwhile (reported, orphaned): the next heartbeat tells.
      await store.heartbeat(s.task_id).catch(() => {});
    }
    desk?.touched(name, s.task_id, s.session_id, s.pushed);
    const end = desk?.ending(s.session_id) ??
      (lease.task.status === "CANCELLED" ? "cancelled" : undefined);
    sessions.push(end ? { ...pick(s), keep: false, reason: end } : { ...pick(s), keep: true });
  }
  // An operator's drain is delivered here: the worker claims nothing more and ends when done.
  const answer: HeartbeatAnswer = {
    sessions,
    ...(registry.get(name)?.draining ? { drain: true } : {}),
  };
  return c.json(answer);
}

function pick(s: { task_id: string; session_id: string }) {
  return { task_id: s.task_id, session_id: s.session_id };
}
