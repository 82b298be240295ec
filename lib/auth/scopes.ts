/**
 * Scope ranks (docs/security.md): `reader` < `worker` < `operator`; a holder may do what its
 * rank and every lower rank may. Which scope each URL needs is stated by its route module's
 * `policy` (lib/http/route_policy.ts), not here.
 */
import type { Scope } from "./tokens.ts";

const RANK: Record<Scope, number> = { reader: 0, worker: 1, operator: 2 };

/** True when a holder of `held` may do what needs `needed`. */
export function scopeAllows(held: Scope | undefined, needed: Scope): boolean {
  return held !== undefined && RANK[held] >= RANK[needed];
}
