/**
 * Bearer tokens (DESIGN.md §6): `auth.tokens` in service.yaml is a list of
 * `{principal, scope, token_env}`; `SERVICE_TOKEN` alone means one operator token.
 * Token values are read from the environment at request time, so rotation needs no restart.
 */
import { constantTimeEqual } from "../journal/hash.ts";
import { UserFacingError } from "../errors.ts";

/**
 * Scopes a principal can hold, lowest first (each route's policy names the one it needs).
 * `agent` is held only by the credentials the service mints for its agents
 * (lib/auth/agent_credentials.ts), never by a configured token.
 */
export const SCOPES = ["reader", "agent", "worker", "operator"] as const;
/**
 * A scope: one of {@link SCOPES}, or `session` — the capability a remote worker's claim carries
 * for one session (its heartbeat and report), outside the ranking: it does nothing else, and
 * nothing else does what it does (lib/auth/scopes.ts).
 */
export type Scope = typeof SCOPES[number] | "session";
/** The scopes `auth.tokens` may give a configured token. */
export const CONFIG_SCOPES = ["reader", "worker", "operator"] as const;

/** One configured token: who it is, what it may do, which variable holds its value. */
export interface TokenSpec {
  principal: string;
  scope: typeof CONFIG_SCOPES[number];
  token_env: string;
}

/**
 * An authenticated caller (an agent's also names its run, task and session; a worker session's
 * also its worker).
 */
export interface Principal {
  principal: string;
  scope: Scope;
  run_id?: string;
  task_id?: string;
  session_id?: string;
  worker?: string;
}

/** The principal of review actions on an unconfigured loopback bind (spec §5). */
export const LOCAL_OPERATOR: Principal = { principal: "dashboard-operator", scope: "operator" };

/** The token specs in force: the configured list, else `SERVICE_TOKEN` as one operator token. */
export function effectiveTokenSpecs(
  configured: TokenSpec[],
  env: (name: string) => string | undefined,
): TokenSpec[] {
  return configured.length > 0
    ? configured
    : env("SERVICE_TOKEN")
    ? [{ principal: "operator", scope: "operator", token_env: "SERVICE_TOKEN" }]
    : [];
}

/**
 * Who presents `token`, comparing against every configured value in constant time (no early
 * exit, so timing does not reveal which token nearly matched). Undefined when none matches.
 */
export function authenticate(
  token: string,
  specs: TokenSpec[],
  env: (name: string) => string | undefined,
): Principal | undefined {
  let found: Principal | undefined;
  for (const spec of specs) {
    const value = env(spec.token_env);
    if (!value) continue;
    if (constantTimeEqual(token, value) && !found) {
      found = { principal: spec.principal, scope: spec.scope };
    }
  }
  return found;
}

/**
 * True when tokens are in force: any configured entry, whatever its variable holds now. A
 * variable that is later emptied fails closed (its token matches nothing), never open.
 */
export function tokensActive(specs: TokenSpec[]): boolean {
  return specs.length > 0;
}

/** A configured token whose variable is unset or empty: the server refuses to start. */
export class TokenVariableUnsetError extends UserFacingError {
  constructor(readonly missing: TokenSpec[]) {
    const names = missing.map((s) => s.token_env);
    super(
      `auth.tokens in service.yaml names ${
        missing.map((s) => `${s.token_env} (principal ${JSON.stringify(s.principal)})`).join(", ")
      } but ${names.length === 1 ? "that variable is" : "those variables are"} unset or empty: ` +
        "the server would start with that principal locked out or, worse, unprotected. " +
        `Fix: export ${names.map((n) => `${n}=<secret>`).join(" ")} before starting, ` +
        "or remove the entry from auth.tokens.",
      1,
      `export ${names.map((n) => `${n}=<secret>`).join(" ")}, or remove the entry from auth.tokens`,
    );
    this.name = "TokenVariableUnsetError";
  }
}

/** Throw {@link TokenVariableUnsetError} unless every configured token variable has a value. */
export function assertTokenVariablesSet(
  configured: TokenSpec[],
  env: (name: string) => string | undefined,
): void {
  const missing = configured.filter((s) => !env(s.token_env)?.trim());
  if (missing.length > 0) throw new TokenVariableUnsetError(missing);
}
