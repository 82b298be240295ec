/** The one handler of `POST /workers/<name>/cordon|uncordon|drain` (routes/workers/[worker]/). */
import type { Ctx } from "../http/context.ts";
import { readOptionalJsonObject } from "../http/body.ts";
import { requireId } from "../ids.ts";
import { parseBody } from "../tasks/http_input.ts";
import { loadConfig } from "../config/load.ts";
import { registryFor } from "./registry.ts";
import { actOnWorker, CordonBodySchema, type WorkerAction } from "./operator.ts";

/** Apply `action` to the worker the URL names, for the calling operator; its new state. */
export async function answerWorkerAction(c: Ctx, action: WorkerAction): Promise<Response> {
  const name = requireId("worker", c.req.param("worker")!);
  const body = parseBody(CordonBodySchema, await readOptionalJsonObject(c));
  const app = c.get("app");
  const registry = await registryFor(app.paths.root);
  const worker = actOnWorker(registry, action, name, {
    by: c.get("principal").principal,
    reason: body.reason,
    now: Date.now(),
    timeoutS: (await loadConfig(app.paths.root))?.heartbeat_timeout_s ?? 45,
  });
  await registry.flushed();
  return c.json({ worker });
}
