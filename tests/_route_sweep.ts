/**
 * One request to every method of every route of the manifest (tests/lazy_routes_test.ts, the
 * bundle's test): its path's parameters filled in, a JSON `{}` for a write, the stream of
 * `/events` closed once its headers came. What each answered, to check none is a 500.
 */
import { ROUTES } from "../routes/_manifest.gen.ts";
import { routeMethods } from "../lib/http/lazy_route.ts";

/** What one request answered. */
export interface SweptRoute {
  request: string;
  status: number;
  body: string;
}

/** Values of the path parameters the routes use (`:run_id` …), and who calls. */
export interface SweepOptions {
  params?: Record<string, string>;
  /** The `Authorization` header for a route's access (`session` routes need a capability). */
  authorization?: (access: string) => string | undefined;
}

const DEFAULT_PARAMS: Record<string, string> = {
  run_id: "no-such-run",
  task_id: "no-such-task",
  worker: "w1",
  session_id: "s1",
  adapter_name: "github",
  file: "no-such-file.js",
};

/** `path` with each `:name` replaced by its value. */
function filled(path: string, params: Record<string, string>): string {
  return path.replace(/:([A-Za-z_]+)/g, (_, name) => encodeURIComponent(params[name] ?? "x"));
}

/** Request every route of the manifest once per method at `base`, in manifest order. */
export async function sweepRoutes(base: string, options: SweepOptions = {}): Promise<SweptRoute[]> {
  const params = { ...DEFAULT_PARAMS, ...options.params };
  const out: SweptRoute[] = [];
  for (const route of ROUTES) {
    for (const method of routeMethods(route.policy)) {
      const path = filled(route.path, params);
      const headers: Record<string, string> = {};
      const auth = options.authorization?.(route.policy.access[method]!);
      if (auth) headers.authorization = auth;
      if (method !== "GET") headers["content-type"] = "application/json";
      const res = await fetch(`${base}${path}`, {
        method,
        headers,
        body: method === "GET" ? undefined : "{}",
      });
      // A stream (`/events`) never ends by itself: its status and headers are the answer.
      const streaming = res.headers.get("content-type")?.startsWith("text/event-stream");
      const body = streaming ? "" : await res.text();
      if (streaming) await res.body?.cancel();
      out.push({ request: `${method} ${path}`, status: res.status, body });
    }
  }
  return out;
}
