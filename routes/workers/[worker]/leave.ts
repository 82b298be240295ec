/**
 * POST /workers/<name>/leave — the worker stops (its `--once` task is reported, it was idle for
 * `--exit-when-idle`, or it drained): it is no longer counted among the connected workers and
 * their free slots (`/metrics`), and its name is free again; `service workers` no longer lists it
 * (unless it is cordoned).
 */
import type { Ctx } from "../../../lib/http/context.ts";
import { readJsonBody } from "../../../lib/http/body.ts";
import { requireId } from "../../../lib/ids.ts";
import { parseBody } from "../../../lib/tasks/http_input.ts";
import { routePolicy } from "../../../lib/http/route_policy.ts";
import { LeaveBodySchema } from "../../../lib/workers/protocol.ts";
import { rosterFor } from "../../../lib/workers/roster.ts";
import { registryFor } from "../../../lib/workers/registry.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ POST: "worker" });

/** Forget the worker. */
export async function POST(c: Ctx): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  parseBody(LeaveBodySchema, await readJsonBody(c));
  const root = c.get("app").paths.root;
  // Only the principal the name is bound to makes it leave (another token's is ignored).
  if (rosterFor(root).left(name, c.get("principal"))) (await registryFor(root)).left(name);
  return c.body(null, 204);
}
