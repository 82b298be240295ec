/**
 * Agent wall-clock timeouts (spec §8): scope small 15 min, medium 30, large 60; the XL roles
 * (architect, security, manager) 120 min; default 1800 s. Adaptive: with at least 5 historical
 * durations of the same role and scope in `.sdd/metrics/tasks.jsonl`, the timeout becomes
 * p90 × 1.5, clamped to [0.5 ×, 2 ×] the base. Pure.
 */

/** Timeout per plan-step scope, in seconds. */
const SCOPE_TIMEOUT_S = { small: 900, medium: 1800, large: 3600 } as const;
/** Roles that get the XL timeout. */
const XL_ROLES: readonly string[] = ["architect", "security", "manager"];
/** XL role timeout in seconds. */
const XL_TIMEOUT_S = 7200;
/** Default timeout in seconds. */
const DEFAULT_TIMEOUT_S = 1800;

/** What a timeout depends on. */
export interface TimeoutKey {
  scope?: string;
  role?: string;
}

/** Options of `adaptiveTimeoutS`. */
export interface AdaptiveOptions {
  /** Fewest samples before adapting; default 5. */
  minSamples?: number;
  /** Percentile of the durations; default 0.9. */
  percentile?: number;
  /** Head-room factor; default 1.5. */
  factor?: number;
  /** Clamp relative to the base; default [0.5, 2]. */
  clamp?: [number, number];
}

/** The base timeout: XL roles 7200 s (whatever the scope), else the scope's, else 1800 s. */
export function baseTimeoutS(key: TimeoutKey): number {
  if (key.role && XL_ROLES.includes(key.role)) return XL_TIMEOUT_S;
  if (key.scope && key.scope in SCOPE_TIMEOUT_S) {
    return SCOPE_TIMEOUT_S[key.scope as keyof typeof SCOPE_TIMEOUT_S];
  }
  return DEFAULT_TIMEOUT_S;
}

/** The nearest-rank percentile of `values` (not empty). */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil(p * sorted.length));
  return sorted[rank - 1];
}

/** `base` adjusted from historical durations (seconds); `base` with too few samples. */
export function adaptiveTimeoutS(
  base: number,
  durations: number[],
  options: AdaptiveOptions = {},
): number {
  const valid = durations.filter((d) => Number.isFinite(d) && d > 0);
  if (valid.length < (options.minSamples ?? 5)) return base;
  const [lo, hi] = options.clamp ?? [0.5, 2];
  const proposed = percentile(valid, options.percentile ?? 0.9) * (options.factor ?? 1.5);
  return Math.round(Math.min(hi * base, Math.max(lo * base, proposed)));
}

/**
 * Durations (`duration_s`) of tasks.jsonl records with the same role and scope as `key`
 * (a record without a scope counts as the default scope). Lines that do not parse are skipped.
 */
function historicalDurations(tasksJsonl: string, key: TimeoutKey): number[] {
  const out: number[] = [];
  for (const line of tasksJsonl.split("\n")) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line);
      if (typeof r?.duration_s !== "number") continue;
      if ((r.role ?? undefined) !== key.role) continue;
      if ((r.scope ?? undefined) !== key.scope) continue;
      out.push(r.duration_s);
    } catch { /* torn or foreign line */ }
  }
  return out;
}

/** The timeout of a task in seconds: base, adapted from `tasksJsonl` history when given. */
export function agentTimeoutS(
  key: TimeoutKey,
  tasksJsonl = "",
  options: AdaptiveOptions = {},
): number {
  return adaptiveTimeoutS(baseTimeoutS(key), historicalDurations(tasksJsonl, key), options);
}
