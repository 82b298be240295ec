/**
 * GET /workers — the workers this workspace's server has heard from (`service workers`): slots,
 * what each offers and lacks, when it was last heard from, agents that did not start on it, and
 * an operator's cordon or drain.
 */
import type { Ctx } from "../lib/http/context.ts";
import { routePolicy } from "../lib/http/route_policy.ts";
import { loadConfig } from "../lib/config/load.ts";
import { registryFor } from "../lib/workers/registry.ts";
import { workerViews } from "../lib/workers/operator.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader" });

/** The workers, by name. */
export async function GET(c: Ctx): Promise<Response> {
  const app = c.get("app");
  const timeout = (await loadConfig(app.paths.root))?.heartbeat_timeout_s ?? 45;
  c.header("Cache-Control", "no-store");
  return c.json({
    workers: workerViews(await registryFor(app.paths.root), Date.now(), timeout),
    heartbeat_timeout_s: timeout,
  });
}
