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
import { secretEnv } from "../auth/secret_env.ts";
import {
  agentPrincipal,
  looksLikeAgentCredential,
  looksLikeWorkerSessionCredential,
  workerSessionPrincipal,
} from "../auth/agent_credentials.ts";
import { proxyPrincipal, type ProxyRefusal, untrustedUserHeader } from "../auth/trusted_proxy.ts";
import type { AppContext } from "./context.ts";

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
 * True when the request came in through the agents' listener (lib/server/listen.ts): local
 * agents' `SERVICE_SERVER_URL`, and the only server address a container's relay leads to.
 */
export function viaAgentListener(env: unknown): boolean {
  return (env as { agentPath?: unknown } | undefined)?.agentPath === true;
}

/** True when the request came through the trusted single sign-on proxy's listener. */
export function viaProxyListener(env: unknown): boolean {
  return (env as { proxyPath?: unknown } | undefined)?.proxyPath === true;
}

/**
 * Who is calling, then whether they may (docs/security.md "Who may call what"):
 *
 * - through the single sign-on proxy's listener (`server.trusted_proxy`), the user its header
 *   names, with the proxy's shared secret (401 without it); that header anywhere else is 403;
 * - an agent credential (lib/auth/agent_credentials.ts) is that agent session, scope `agent`,
 *   whatever the configuration; one that is not valid is 401, never anything else;
 * - a worker's session capability (same module) is that worker's session, scope `session`,
 *   likewise; it calls its own session's routes and nothing else;
 * - through the agents' listener nothing else is taken: no token is 401, another token 403;
 * - with no token configured, anyone else is the local `dashboard-operator` (loopback only);
 * - else a configured bearer token is required (401).
 *
 * Then the scope the route needs (403, before the handler runs), an agent's writes only on its
 * own task and a session capability only on its own worker's session (403). Public routes do not
 * mount it.
 */
export function bearerAuth(
  options: BearerAuthOptions,
): MiddlewareHandler<{ Variables: AuthVariables & { app: AppContext } }> {
  const env = options.env ?? ((name: string) => secretEnv(name));
  const needed = options.scope;
  return async function bearerAuthMiddleware(c, next) {
    let header = c.req.header("authorization") ?? "";
    const fromQuery = options.queryToken ? c.req.query("access_token") : undefined;
    if (!header && fromQuery) header = `Bearer ${fromQuery}`;
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    const token = match?.[1];
    const root = c.get("app").paths.root;
    const proxy = c.get("app").trustedProxy;
    const headerOf = (name: string) => c.req.header(name);
    if (!viaProxyListener(c.env)) {
      const refusal = untrustedUserHeader(proxy, headerOf);
      if (refusal) throw refused(refusal);
    }
    const principal = viaProxyListener(c.env)
      ? proxied(proxy, headerOf, env)
      : token && looksLikeAgentCredential(token)
      ? agentPrincipal(root, token) ?? unauthorized(INVALID_AGENT)
      : token && looksLikeWorkerSessionCredential(token) && !viaAgentListener(c.env)
      ? workerSessionPrincipal(root, token) ?? unauthorized(INVALID_SESSION)
      : viaAgentListener(c.env)
      ? refuseNonAgent(token)
      : configuredPrincipal(options.specs(), token, env);
    c.set("principal", principal);
    if (!scopeAllows(principal.scope, needed)) throw forbidden(principal, needed);
    if (principal.scope === "agent" && needed === "agent") {
      const taskId = c.req.param("task_id");
      if (taskId !== principal.task_id) {
        throw new HttpError(
          403,
          "forbidden",
          `agent session ${principal.session_id} may act only on its own task ` +
            `${principal.task_id}, not ${JSON.stringify(taskId ?? null)}`,
        );
      }
    }
    if (principal.scope === "session") {
      const [worker, session] = [c.req.param("worker"), c.req.param("session_id")];
      if (worker !== principal.worker || session !== principal.session_id) {
        throw new HttpError(
          403,
          "forbidden",
          `this capability is worker ${principal.worker}'s for session ${principal.session_id}; ` +
            `it does not speak for ${JSON.stringify(worker ?? null)}'s session ` +
            JSON.stringify(session ?? null),
        );
      }
    }
    await next();
  };
}

/** The proxy's user, or its refusal. */
function proxied(
  proxy: Parameters<typeof proxyPrincipal>[0] | undefined,
  header: (name: string) => string | undefined,
  env: (name: string) => string | undefined,
): Principal {
  if (!proxy) throw new HttpError(403, "forbidden", "no trusted proxy is configured");
  const got = proxyPrincipal(proxy, header, env);
  if (got.ok) return got.principal;
  throw refused(got);
}

function refused(r: ProxyRefusal): HttpError {
  return new HttpError(
    r.status,
    r.code,
    r.message,
    r.status === 401 ? { "WWW-Authenticate": 'Bearer realm="service"' } : {},
  );
}

const INVALID_SESSION = "this session capability is not valid: the session's report was " +
  "taken, its run ended, or the service that minted it lost it";

const INVALID_AGENT = "this agent credential is not valid: its session ended, or the service " +
  "that minted it restarted";

function unauthorized(message: string): never {
  throw new HttpError(401, "unauthorized", message, {
    "WWW-Authenticate": 'Bearer realm="service"',
  });
}

function refuseNonAgent(token: string | undefined): never {
  if (!token) {
    unauthorized(
      "this is the task server's address for agents: a request needs the agent session's " +
        "credential (`Authorization: Bearer $SERVICE_TOKEN`)",
    );
  }
  throw new HttpError(
    403,
    "forbidden",
    "this is the task server's address for agents: it takes an agent session's credential only",
  );
}

/** The caller by the configured tokens: the local operator when none is in force. */
function configuredPrincipal(
  specs: TokenSpec[],
  token: string | undefined,
  env: (name: string) => string | undefined,
): Principal {
  if (!tokensActive(specs)) return LOCAL_OPERATOR;
  const principal = token ? authenticate(token, specs, env) : undefined;
  if (principal) return principal;
  return unauthorized(
    token
      ? "the bearer token is not valid"
      : "a bearer token is required: send `Authorization: Bearer <token>`",
  );
}

function forbidden(principal: Principal | undefined, needed: Scope): HttpError {
  if (needed === "session") {
    return new HttpError(
      403,
      "forbidden",
      "a session's heartbeat and report take the capability its claim's answer carried " +
        "(`session_token`), not a configured token (docs/workers.md)",
    );
  }
  if (principal?.scope === "session") {
    return new HttpError(
      403,
      "forbidden",
      "a worker's session capability sends its session's heartbeat and report, nothing else",
    );
  }
  return new HttpError(
    403,
    "forbidden",
    `principal ${JSON.stringify(principal?.principal)} has scope ${
      JSON.stringify(principal?.scope)
    }; this action needs scope "${needed}" (docs/security.md has the scope matrix)`,
  );
}
