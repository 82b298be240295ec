/**
 * Bearer tokens (DESIGN.md §6): `auth.tokens` in service.yaml is a list of
 * `{principal, scope, token_env}`; `SERVICE_TOKEN` alone means one operator token.
 * Token values are read from the environment at request time, so rotation needs no restart.
 */
import { constantTimeEqual } from "../journal/hash.ts";
import { UserFacingError } from "../errors.ts";

/** Scopes a principal can hold, lowest first (each route's policy names the one it needs). */
export const SCOPES = ["reader", "worker", "operator"] as const;
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

/** Worker-scope tokens this process minted for its own agents (see {@link agentToken}). */
const minted: TokenSpec[] = [];

/**
 * The token specs in force: the configured list, else `SERVICE_TOKEN` as one operator token;
 * with the worker-scope tokens this process minted for its agents once any token is in force.
 */
export function effectiveTokenSpecs(
  configured: TokenSpec[],
  env: (name: string) => string | undefined,
): TokenSpec[] {
  const specs: TokenSpec[] = configured.length > 0
    ? configured
    : env("SERVICE_TOKEN")
    ? [{ principal: "operator", scope: "operator", token_env: "SERVICE_TOKEN" }]
    : [];
  return specs.length > 0 && minted.length > 0 ? [...specs, ...minted] : specs;
}

/**
 * The token this process's agents call the task API with (DESIGN.md §16): never an operator's.
 * A configured `worker`-scope token when there is one, else one minted for this process (held
 * in its environment under a name the agents' allow-list never forwards); none when no token is
 * in force (the server is open on loopback).
 */
export function agentToken(
  configured: TokenSpec[],
  env: Record<string, string | undefined>,
): string | undefined {
  const specs = effectiveTokenSpecs(configured, (n) => env[n]);
  if (specs.length === 0) return undefined;
  const worker = specs.find((s) => s.scope === "worker" && env[s.token_env]);
  if (worker) return env[worker.token_env];
  const name = `SERVICE_MINTED_AGENT_TOKEN_${Deno.pid}`;
  let value = Deno.env.get(name);
  if (!value) {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    value = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    Deno.env.set(name, value);
    minted.push({ principal: "agents", scope: "worker", token_env: name });
  }
  return value;
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
