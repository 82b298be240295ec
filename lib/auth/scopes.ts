/**
 * The scope matrix (docs/security.md): which scope each request needs, written once. Scopes are
 * ranked `reader` < `worker` < `operator`; a holder may do what its rank and every lower rank
 * may. Anything not listed that changes state needs `operator` (fail closed).
 */
import type { Scope } from "./tokens.ts";

/**
 * Paths served without a bearer token: the board page and its static bundle carry no data
 * (DESIGN.md §6); webhook deliveries are authenticated by their signature (spec §5).
 */
export function isPublicPath(path: string): boolean {
  return /^\/dashboard\/review-board\/?$/.test(path) || path.startsWith("/static/") ||
    path.startsWith("/webhooks/");
}

/**
 * Paths that also accept the token as `?access_token=`: only `/events`, because EventSource
 * cannot send headers. Query strings end up in logs and history, so nothing else does.
 */
export function acceptsQueryToken(path: string): boolean {
  return path === "/events";
}

const RANK: Record<Scope, number> = { reader: 0, worker: 1, operator: 2 };

/** One row of the matrix: a method, a path pattern, the scope it needs and what it does. */
export interface ScopeRule {
  method: "GET" | "POST";
  pattern: RegExp;
  /** The path as documented (docs/security.md). */
  path: string;
  scope: Scope;
}

/** The rules, first match wins; the defaults follow them. */
export const SCOPE_MATRIX: readonly ScopeRule[] = [
  {
    method: "POST",
    pattern: /^\/dashboard\/review-board\/runs\/[^/]+\/tasks\/[^/]+\/review$/,
    path: "/dashboard/review-board/runs/<run_id>/tasks/<task_id>/review",
    scope: "operator",
  },
  { method: "POST", pattern: /^\/tasks\/?$/, path: "/tasks", scope: "operator" },
  {
    method: "POST",
    pattern: /^\/tasks\/[^/]+\/(cancel|reopen|retry)$/,
    path: "/tasks/<id>/cancel, /reopen, /retry",
    scope: "operator",
  },
  { method: "POST", pattern: /^\/tasks\/next$/, path: "/tasks/next", scope: "worker" },
  {
    method: "POST",
    pattern: /^\/tasks\/[^/]+\/(claim|heartbeat|complete|fail)$/,
    path: "/tasks/<id>/claim, /heartbeat, /complete, /fail",
    scope: "worker",
  },
];

/** The scope a request needs: its matrix row, else `reader` for reads and `operator` for writes. */
export function requiredScope(method: string, path: string): Scope {
  const m = method.toUpperCase();
  const rule = SCOPE_MATRIX.find((r) => r.method === m && r.pattern.test(path));
  if (rule) return rule.scope;
  return m === "GET" || m === "HEAD" || m === "OPTIONS" ? "reader" : "operator";
}

/** True when a holder of `held` may do what needs `needed`. */
export function scopeAllows(held: Scope | undefined, needed: Scope): boolean {
  return held !== undefined && RANK[held] >= RANK[needed];
}
