/**
 * Parked adapters (spec §7.3 RateLimitError, §8; DESIGN.md §15): after a rate or usage limit,
 * spawns for the affected adapter are blocked until the reset time the limit names, else for the
 * 300 s cooldown. `CooldownTracker` is pure (the clock is passed in as epoch seconds);
 * `loadCooldowns` and `saveCooldowns` persist it to `.sdd/runtime/rate_limits.json`.
 */
import { writeFileAtomic } from "../util/atomic_write.ts";

/** Spawn block after a rate-limit hit that names no reset time, in seconds (spec §8). */
export const RATE_LIMIT_COOLDOWN_S = 300;

/** The longest park a named reset gets: a monthly spend limit resets within a month. */
const MAX_PARK_S = 32 * 86_400;

/** A named reset that has passed still parks this long, so the same limit is not hit at once. */
const MIN_PARK_S = 1;

/** One adapter's cooldown. */
export interface CooldownEntry {
  /** Epoch seconds until which spawns are blocked. */
  until: number;
  /** Epoch seconds of the hit. */
  since: number;
  /** Rule that matched (see `rate_limit.ts`), when known. */
  rule?: string;
  /** The matched log line, when known. */
  line?: string;
  /** `until` is the reset time the limit named (absent: the cooldown). */
  named?: true;
}

/** On-disk form of `.sdd/runtime/rate_limits.json`. */
export interface CooldownFile {
  version: 1;
  cooldowns: Record<string, CooldownEntry>;
}

/** Blocks spawns per adapter after a rate-limit hit. */
export class CooldownTracker {
  #entries: Map<string, CooldownEntry>;
  readonly cooldownS: number;

  constructor(entries: Record<string, CooldownEntry> = {}, cooldownS = RATE_LIMIT_COOLDOWN_S) {
    this.#entries = new Map(Object.entries(entries));
    this.cooldownS = cooldownS;
  }

  /**
   * Record a hit at `now`. The adapter is parked until `resetsAt` (epoch seconds, the reset the
   * limit named; kept between {@link MIN_PARK_S} and {@link MAX_PARK_S} from now), else for
   * `cooldownS`. A park already running that ends later is kept — unless it is a cooldown and
   * this hit names its reset: the provider's word replaces the guess (the same agent's lines are
   * often read in two looks, the bare throttling signal first, the message naming the reset next).
   */
  recordHit(
    adapter: string,
    now: number,
    evidence: { rule?: string; line?: string; resetsAt?: number } = {},
  ): CooldownEntry {
    const { resetsAt, ...said } = evidence;
    const prev = this.#entries.get(adapter);
    const own = resetsAt === undefined
      ? now + this.cooldownS
      : Math.min(Math.max(resetsAt, now + MIN_PARK_S), now + MAX_PARK_S);
    const guessed = prev !== undefined && prev.named !== true && resetsAt !== undefined;
    const kept = prev !== undefined && prev.until > own && !guessed;
    const entry: CooldownEntry = kept
      ? prev
      : { until: own, since: now, ...said, ...(resetsAt === undefined ? {} : { named: true }) };
    this.#entries.set(adapter, entry);
    return entry;
  }

  /** The park of `adapter` while it lasts at `now`. */
  entry(adapter: string, now: number): CooldownEntry | undefined {
    const e = this.#entries.get(adapter);
    return e && e.until > now ? e : undefined;
  }

  /** True while spawns for `adapter` are blocked. */
  isBlocked(adapter: string, now: number): boolean {
    return this.remaining(adapter, now) > 0;
  }

  /** Seconds until `adapter` may spawn again (0 when it may now). */
  remaining(adapter: string, now: number): number {
    const e = this.#entries.get(adapter);
    return e ? Math.max(0, e.until - now) : 0;
  }

  /** Adapters blocked at `now` with their remaining seconds (for `status`). */
  blocked(now: number): Record<string, number> {
    const out: Record<string, number> = {};
    for (const name of [...this.#entries.keys()].sort()) {
      const r = this.remaining(name, now);
      if (r > 0) out[name] = r;
    }
    return out;
  }

  /** Lift a block by hand. */
  clear(adapter: string): void {
    this.#entries.delete(adapter);
  }

  /** The serialisable form; entries that ended before `now` are dropped when `now` is given. */
  toJSON(now?: number): CooldownFile {
    const cooldowns: Record<string, CooldownEntry> = {};
    for (const [name, e] of [...this.#entries].sort(([a], [b]) => a.localeCompare(b))) {
      if (now === undefined || e.until > now) cooldowns[name] = e;
    }
    return { version: 1, cooldowns };
  }

  /** Rebuild from `toJSON()` output; malformed entries are ignored. */
  static fromJSON(data: unknown, cooldownS = RATE_LIMIT_COOLDOWN_S): CooldownTracker {
    const entries: Record<string, CooldownEntry> = {};
    const raw = (data as { cooldowns?: unknown })?.cooldowns;
    if (raw && typeof raw === "object") {
      for (const [name, e] of Object.entries(raw as Record<string, unknown>)) {
        const v = e as Partial<CooldownEntry>;
        if (typeof v?.until === "number" && typeof v.since === "number") {
          entries[name] = { ...v, until: v.until, since: v.since };
          if (v.named !== true) delete entries[name].named;
        }
      }
    }
    return new CooldownTracker(entries, cooldownS);
  }
}

/** Read `.sdd/runtime/rate_limits.json`; a missing or unreadable file gives an empty tracker. */
export async function loadCooldowns(path: string): Promise<CooldownTracker> {
  try {
    return CooldownTracker.fromJSON(JSON.parse(await Deno.readTextFile(path)));
  } catch (e) {
    if (e instanceof Deno.errors.NotFound || e instanceof SyntaxError) return new CooldownTracker();
    throw e;
  }
}

/** Write the tracker atomically (temp file + rename), dropping entries over at `now`. */
export async function saveCooldowns(
  path: string,
  tracker: CooldownTracker,
  now: number,
): Promise<void> {
  await writeFileAtomic(path, JSON.stringify(tracker.toJSON(now), null, 2) + "\n");
}
