/**
 * Rate and usage limits (spec §7.3, DESIGN.md §15): a match in an agent's new log lines parks its
 * adapter — until the reset time the limit names (rounded up to the second), else for the
 * cooldown (300 s) — saved in
 * `.sdd/runtime/rate_limits.json`. The hit is handed to the decision core, which journals it,
 * ends the agent and requeues the task without counting the attempt; tasks start with a fallback
 * adapter meanwhile, or wait.
 */
import { join } from "node:path";
import { type CooldownTracker, saveCooldowns } from "../agents/cooldown.ts";
import { parkUntil } from "../agents/reset_time.ts";
import type { RateLimitHit } from "./events.ts";
import { scanNewLines } from "./log_watch.ts";
import { serialised } from "../async/serialised.ts";
import type { AgentSession } from "./session.ts";

/** What the guard acts through. */
export interface RateLimitGuardOptions {
  cooldowns: CooldownTracker;
  runtimeDir: string;
  /** Seconds since the epoch (tests pin it). */
  nowS?: () => number;
}

/** Watches agents' logs for rate and usage limits, and knows which adapters are parked. */
export class RateLimitGuard {
  readonly #o: RateLimitGuardOptions;
  readonly #nowS: () => number;

  constructor(options: RateLimitGuardOptions) {
    this.#o = options;
    this.#nowS = options.nowS ?? (() => Date.now() / 1000);
  }

  /** Seconds until each parked adapter may start agents again. */
  parked(): Record<string, number> {
    return this.#o.cooldowns.blocked(this.#nowS());
  }

  /**
   * Scan the session's new log lines; on a limit, park its adapter and say so. Scans of
   * one session run one at a time (a heartbeat's and its exit's), so no line is reported twice.
   */
  check(session: AgentSession): Promise<RateLimitHit | undefined> {
    return serialised(`rate-limit-scan:${session.sessionId}`, () => this.#scan(session));
  }

  async #scan(session: AgentSession): Promise<RateLimitHit | undefined> {
    const o = this.#o;
    const adapter = session.adapter.name;
    const { match, scannedTo } = await scanNewLines(
      session.logPath,
      session.scannedBytes,
      session.proc.alive,
      adapter,
    );
    session.scannedBytes = scannedTo;
    if (!match) return undefined;
    const nowS = this.#nowS();
    const resetsAt = match.reset && parkUntil(match.reset, nowS * 1000);
    const entry = o.cooldowns.recordHit(adapter, nowS, {
      rule: match.rule,
      line: match.line,
      ...(resetsAt === undefined ? {} : { resetsAt }),
    });
    await saveCooldowns(join(o.runtimeDir, "rate_limits.json"), o.cooldowns, nowS).catch(() => {});
    return {
      type: "rate_limit_hit",
      taskId: session.task.id,
      sessionId: session.sessionId,
      adapter,
      rule: match.rule,
      line: match.line.slice(0, 500),
      until: Math.ceil(entry.until), // never before the reset
      named: entry.named === true,
    };
  }
}
