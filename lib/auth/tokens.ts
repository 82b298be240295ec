/**
 * Bearer tokens (DESIGN.md §6): `auth.tokens` in service.yaml is a list of
 * `{principal, scope, token_env}`; `SERVICE_TOKEN` alone means one operator token.
 * Token values are read from the environment at request time, so rotation needs no restart.
 */
import { constantTimeEqual } from "../journal/hash.ts";

/** Scopes a principal can hold. */
export const SCOPES = ["reader", "operator"] as const;
/** A scope. */
export type Scope = typeof SCOPES[number];

/** One configured token: who it is, what it may do, which variable holds its value. */
export interface TokenSpec {
  principal: string;
  scope: Scope;
  token_env: string;
}

/** An authenticated caller. */
export interface Principal {
  principal: string;
  scope: Scope;
}

/** The principal of review actions on an unconfigured loopback bind (spec §5). */
export const LOCAL_OPERATOR: Principal = { principal: "dashboard-operator", scope: "operator" };

/** The token specs in force: the configured list, else `SERVICE_TOKEN` as one operator token. */
export function effectiveTokenSpecs(
  configured: TokenSpec[],
  env: (name: string) => string | undefined,
): TokenSpec[] {
  if (configured.length > 0) return configured;
  return env("SERVICE_TOKEN")
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

/** True when at least one configured token has a value: the server then requires tokens. */
export function tokensActive(
  specs: TokenSpec[],
  env: (name: string) => string | undefined,
): boolean {
  return specs.some((s) => Boolean(env(s.token_env)));
}
