/**
 * Hono middleware: bearer authentication and scope checks (spec §5, DESIGN.md §6). The tokens,
 * principals and scope ranks it applies are lib/auth's; this is their HTTP edge.
 */
import type { MiddlewareHandler } from "hono";
import { HttpError } from "./errors.ts";
import {
  authenticate,
  LOCAL_OPERATOR,
  type Principal,
  type Scope,
  tokensActive,
  type TokenSpec,
} from "../auth/tokens.ts";
import { scopeAllows } from "../auth/scopes.ts";

/** Per-request values set by the auth middleware. */
export interface AuthVariables {
  principal: Principal;
}

/** Options of {@link bearerAuth}. */
export interface BearerAuthOptions {
  /** The token specs in force (configured list or the SERVICE_TOKEN shorthand). */
  specs: () => TokenSpec[];
  /** The scope the route's method needs (its policy's access). */
  scope: Scope;
  /** Also read the token from `?access_token=` (the route's policy says so: `/events`). */
  queryToken?: boolean;
  env?: (name: string) => string | undefined;
}

/**
 * Require a valid bearer token once any token is configured (401 otherwise), then the scope the
 * route needs (403, before the handler runs). Public routes do not mount it. With no token
 * configured, the caller is the local `dashboard-operator` (the server binds loopback only).
 */
export function bearerAuth(
  options: BearerAuthOptions,
): MiddlewareHandler<{ Variables: AuthVariables }> {
  const env = options.env ?? ((name: string) => Deno.env.get(name));
  const needed = options.scope;
  return async function bearerAuthMiddleware(c, next) {
    const specs = options.specs();
    if (!tokensActive(specs)) {
      c.set("principal", LOCAL_OPERATOR);
      return await next();
    }
    let header = c.req.header("authorization") ?? "";
    const fromQuery = options.queryToken ? c.req.query("access_token") : undefined;
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
