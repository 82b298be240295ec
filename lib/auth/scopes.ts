/**
 * Scope ranks (docs/security.md): `reader` < `agent` < `worker` < `operator`; a holder may do
 * what its rank and every lower rank may (an agent's writes are also bound to its own task, a
 * worker session's to its own session: lib/http/bearer_auth.ts). Which scope each URL needs is stated by its route module's
 * `policy` (lib/http/route_policy.ts), not here.
 */
import type { Scope } from "./tokens.ts";

const RANK: Record<Exclude<Scope, "session">, number> = {
  reader: 0,
  agent: 1,
  worker: 2,
  operator: 3,
};

/**
 * True when a holder of `held` may do what needs `needed`. A worker's session capability
 * (`session`) is outside the ranking: it may call its session's routes only, and only it may.
 */
export function scopeAllows(held: Scope | undefined, needed: Scope): boolean {
  if (held === undefined) return false;
  if (held === "session" || needed === "session") return held === needed;
  return RANK[held] >= RANK[needed];
}
