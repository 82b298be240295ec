/**
 * An operator's hand on the workers (`service workers`, the routes under `/workers`): the list
 * as it stands now, and cordon, uncordon and drain — each answered with the worker's new view,
 * or a 404 naming the workers that are known.
 */
import { z } from "zod";
import { HttpError } from "../http/errors.ts";
import { type WorkerView, workerView } from "./fleet.ts";
import type { WorkerRegistry } from "./registry.ts";

/** `POST /workers/<name>/cordon` (and `drain`). */
export const CordonBodySchema = z.strictObject({
  reason: z.string().min(1).max(500).optional(),
});

/** Every worker as seen at `now`. */
export function workerViews(registry: WorkerRegistry, now: number, timeoutS: number): WorkerView[] {
  return registry.list().map((r) => workerView(r, now, timeoutS));
}

/** What an operator can do to a worker. */
export type WorkerAction = "cordon" | "uncordon" | "drain";

/** Apply `action` to worker `name` on behalf of `by`; the worker's new view. */
export function actOnWorker(
  registry: WorkerRegistry,
  action: WorkerAction,
  name: string,
  o: { by: string; reason?: string; now: number; timeoutS: number },
): WorkerView {
  const rec = action === "cordon"
    ? registry.cordon(name, { reason: o.reason ?? `cordoned by ${o.by}`, by: o.by, now: o.now })
    : action === "uncordon"
    ? registry.uncordon(name)
    : registry.drain(name, o.by, o.now);
  if (!rec) {
    const known = registry.list().map((r) => r.name);
    throw new HttpError(
      404,
      "no_such_worker",
      `no worker ${JSON.stringify(name)} has registered with this workspace` +
        (known.length ? ` (known: ${known.join(", ")})` : " (none has)"),
    );
  }
  return workerView(rec, o.now, o.timeoutS);
}
