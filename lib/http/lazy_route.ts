/**
 * Route handlers imported on first use (docs/performance.md, tenth round): the manifest
 * (routes/_manifest.gen.ts) carries each route's policy as data, so routes/_app.ts mounts every
 * defence at start, and a handler's module is imported by the first request that gets past
 * them. An idle server then holds none of the modules no request has needed.
 */
import type { Ctx } from "./context.ts";
import { ROUTE_METHODS, type RouteMethod, type RoutePolicy } from "./route_policy.ts";

/** A route's handler for one method. */
export type RouteHandler = (c: Ctx) => Response | Promise<Response>;

/** What a route module exports: its `policy` and a handler per method. */
export type RouteModule = { readonly policy?: unknown } & Partial<Record<RouteMethod, unknown>>;

/** One route of the manifest: its URL path, its file, its policy, and how to import it. */
export interface RouteEntry {
  readonly path: string;
  /** The module's path under routes/ (`review-board/runs/[run_id].ts`). */
  readonly file: string;
  /** The module's `policy`, copied by `deno task routes` (checked again when it loads). */
  readonly policy: RoutePolicy;
  /** A dynamic `import()` of a literal path, so the bundler still sees the module. */
  readonly load: () => Promise<RouteModule>;
}

/** The methods a route serves: those its policy grants access to, in {@link ROUTE_METHODS} order. */
export function routeMethods(policy: RoutePolicy): RouteMethod[] {
  return ROUTE_METHODS.filter((m) => policy.access[m] !== undefined);
}

/**
 * `load` run at most once at a time and once for good: concurrent first callers share one
 * import; a failure is not kept, so the next caller tries again.
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= load().catch((e) => {
      pending = undefined;
      throw e;
    });
    return pending;
  };
}

/** The policy fields in a fixed order, to compare two policies whatever their key order. */
function policyText(policy: unknown): string {
  const p = (policy ?? {}) as Partial<RoutePolicy>;
  const access = Object.fromEntries(ROUTE_METHODS.map((m) => [m, p.access?.[m] ?? null]));
  return JSON.stringify([
    access,
    p.signedDelivery,
    p.anyOrigin,
    p.bodyLimit,
    p.trailingSlash,
    p.queryToken,
  ]);
}

/** Whether a loaded module states the policy its route was mounted with. */
export function samePolicy(stated: unknown, mounted: RoutePolicy): boolean {
  return policyText(stated) === policyText(mounted);
}

/**
 * A route whose module did not load or does not match the manifest: the app's `onError` answers
 * it as any failure of the server, a JSON 500 (`internal_error`).
 */
export class RouteUnavailableError extends Error {
  constructor(entry: RouteEntry, method: RouteMethod, why: string, options?: ErrorOptions) {
    super(
      `the handler of ${method} ${entry.path} (routes/${entry.file}) could not be loaded: ${why}`,
      options,
    );
    this.name = "RouteUnavailableError";
  }
}

/**
 * The handler of `method` on `entry`, imported through `module` (a {@link loadOnce} of the
 * entry's `load`, shared by its methods) when first asked for. A module whose `policy` is not
 * the one mounted in front of it is refused: the manifest is stale, and its defences may not
 * be the ones the module states.
 */
export function lazyHandler(
  entry: RouteEntry,
  method: RouteMethod,
  module: () => Promise<RouteModule>,
): RouteHandler {
  let handler: RouteHandler | undefined;
  const resolve = async (): Promise<RouteHandler> => {
    let loaded: RouteModule;
    try {
      loaded = await module();
    } catch (e) {
      const why = `${(e as Error)?.message ?? e}`.split("\n")[0];
      throw new RouteUnavailableError(entry, method, `${why}; the next request tries again`, {
        cause: e,
      });
    }
    if (!samePolicy(loaded.policy, entry.policy)) {
      throw new RouteUnavailableError(
        entry,
        method,
        "its policy is not the one mounted (run `deno task routes`)",
      );
    }
    const found = loaded[method];
    if (typeof found !== "function") {
      throw new RouteUnavailableError(entry, method, `it exports no ${method}`);
    }
    return found as RouteHandler;
  };
  // Once loaded, a request calls the handler directly: no await added to the hot path.
  return (c) => handler ? handler(c) : resolve().then((h) => (handler = h)(c));
}
