/** Hono middleware: bearer authentication and scope checks (spec §5, DESIGN.md §6). */
import type { MiddlewareHandler } from "hono";
import { HttpError } from "../http/errors.ts";
import {
  authenticate,
  LOCAL_OPERATOR,
  type Principal,
  type Scope,
  tokensActive,
  type TokenSpec,
} from "./tokens.ts";
import { acceptsQueryToken, isPublicPath, requiredScope, scopeAllows } from "./scopes.ts";

/** Per-request values set by the auth middleware. */
export interface AuthVariables {
  principal: Principal;
}

/** Options of {@link bearerAuth}. */
export interface BearerAuthOptions {
  /** The token specs in force (configured list or the SERVICE_TOKEN shorthand). */
  specs: () => TokenSpec[];
  env?: (name: string) => string | undefined;
}

/**
 * Require a valid bearer token once any token is configured (401 otherwise), then the scope the
 * request needs by the matrix of `scopes.ts` (403, before the handler runs). Public paths
 * (`isPublicPath`) pass without one; `/events` alone also takes `?access_token=`. With no
 * token configured, the caller is the local `dashboard-operator` (the server binds loopback only).
 */
export function bearerAuth(
  options: BearerAuthOptions,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  return async function bearerAuthMiddleware(c, next) {
    if (isPublicPath(c.req.path)) return await next();
    const specs = options.specs();
    if (!tokensActive(specs)) {
      c.set("principal", LOCAL_OPERATOR);
      return await next();
    }
    let header = c.req.header("authorization") ?? "";
    const fromQuery = acceptsQueryToken(c.req.path) ? c.req.query("access_token") : undefined;
    if (!header && fromQuery) header = `Bearer ${fromQuery}`;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const principal = match ? authenticate(match[1], specs, env) : undefined;
    if (!principal) {
      throw new HttpError(
        401,
        "unauthorized",
        match
          ? "the bearer token is not valid"
          : "a bearer token is required: send `Authorization: Bearer <token>`",
        { "WWW-Authenticate": 'Bearer realm="service"' },
      );
    }
    c.set("principal", principal);
    const needed = requiredScope(c.req.method, c.req.path);
    if (!scopeAllows(principal.scope, needed)) throw forbidden(principal, needed);
    await next();
  };
}

function forbidden(principal: Principal | undefined, needed: Scope): HttpError {
  return new HttpError(
    403,
    "forbidden",
    `principal ${JSON.stringify(principal?.principal)} has scope ${
      JSON.stringify(principal?.scope)
    }; this action needs scope "${needed}" (docs/security.md has the scope matrix)`,
  );
}

/** Refuse (403, before the handler runs) any principal whose scope is not `scope`. */
export function requireScope(scope: Scope): MiddlewareHandler<{ Variables: AuthVariables }> {
  return async function requireScopeMiddleware(c, next) {
    const principal = c.get("principal");
    if (!scopeAllows(principal?.scope, scope)) throw forbidden(principal, scope);
    await next();
  };
}
