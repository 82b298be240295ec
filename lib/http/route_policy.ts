/**
 * What a URL requires, stated by its route module beside its handlers (docs/security.md): who
 * may call each method, whether a signature authenticates it instead of the browser defences,
 * how large its body may be, whether `path/` serves it too and whether `?access_token=` is
 * read. `deno task routes` carries each module's `policy` into `routes/_manifest.gen.ts`, and
 * `routes/_app.ts` mounts the defences each route asks for; there is no second list of paths.
 */
import type { Scope } from "../auth/tokens.ts";
import { MAX_JSON_BODY } from "./body_limit.ts";

/** HTTP methods a route module may export a handler for. */
export const ROUTE_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;

/** One of {@link ROUTE_METHODS}. */
export type RouteMethod = typeof ROUTE_METHODS[number];

/**
 * Who may call a method: the lowest scope a bearer token needs (scopes rank `reader` < `agent` <
 * `worker` < `operator`), `session` — only a remote worker's capability for the session the
 * path names — or `public` — no token at all, for a page or bundle that carries no data (or
 * a probe's one word), or a delivery authenticated by its own signature.
 */
export type Access = Scope | "public";

/** A route's requirements: what its module exports as `policy`. */
export interface RoutePolicy {
  /** Who may call each method the module exports (one entry per handler, no more). */
  access: Partial<Record<RouteMethod, Access>>;
  /**
   * Authenticated per delivery by a signature: exempt from the `Host`, `Origin` and JSON-only
   * defences (trackers send their own names and content types), its raw bytes handed to the
   * handler as `deliveryBody`.
   */
  signedDelivery: boolean;
  /** The bytes carry no data, so a page elsewhere may load them (the `Origin` check is skipped). */
  anyOrigin: boolean;
  /** Largest request body in bytes, enforced while it is read (413). */
  bodyLimit: number;
  /** Also served at the path with a trailing slash (spec §4: `/status/`). */
  trailingSlash: boolean;
  /**
   * Also takes the token as `?access_token=`: only for `EventSource`, which cannot send
   * headers. Query strings end up in logs and history, so nothing else does.
   */
  queryToken: boolean;
}

/** Options of {@link routePolicy}: what differs from the usual JSON route. */
export type RoutePolicyOptions = Partial<Omit<RoutePolicy, "access">>;

/** A route's policy: `access` per method, everything else a JSON route's unless overridden. */
export function routePolicy(
  access: RoutePolicy["access"],
  options: RoutePolicyOptions = {},
): RoutePolicy {
  return {
    access,
    signedDelivery: options.signedDelivery ?? false,
    anyOrigin: options.anyOrigin ?? false,
    bodyLimit: options.bodyLimit ?? MAX_JSON_BODY,
    trailingSlash: options.trailingSlash ?? false,
    queryToken: options.queryToken ?? false,
  };
}
