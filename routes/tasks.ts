/** GET /tasks?status=<status> and POST /tasks (one task or `{"tasks":[…]}`). */
import type { Ctx } from "../lib/http/context.ts";
import { readJsonBody } from "../lib/http/body.ts";
import { HttpError } from "../lib/http/errors.ts";
import { parseStatusQuery, STATUSES } from "../lib/tasks/lifecycle.ts";
import { parseCreateBody } from "../lib/tasks/http_input.ts";
import { taskStoreFor } from "../lib/tasks/registry.ts";
import { routePolicy } from "../lib/http/route_policy.ts";

/** What this URL requires (routes/_app.ts mounts it; docs/security.md lists it). */
export const policy = routePolicy({ GET: "reader", POST: "operator" });

/** List tasks, optionally of one status (lower-case query value). */
export async function GET(c: Ctx): Promise<Response> {
  const query = c.req.query("status");
  const status = query === undefined ? undefined : parseStatusQuery(query);
  if (query !== undefined && !status) {
    throw new HttpError(
      400,
      "invalid_status",
      `unknown status ${JSON.stringify(query)}; use one of ${
        STATUSES.map((s) => s.toLowerCase()).join(", ")
      }`,
    );
  }
  const store = await taskStoreFor(c.get("app"));
  return c.json({ tasks: store.list(status) });
}

/** Create one task (201, the bare task) or a batch atomically (201, `{"tasks":[…]}`). */
export async function POST(c: Ctx): Promise<Response> {
  const body = parseCreateBody(await readJsonBody(c));
  const store = await taskStoreFor(c.get("app"));
  if ("tasks" in body) return c.json({ tasks: await store.create(body.tasks) }, 201);
  const [task] = await store.create([body]);
  return c.json(task, 201);
}
