/**
 * Rate limits (spec §7.3): a match in an agent's new log lines blocks spawns for its adapter for
 * the cooldown (300 s), is logged and journaled with the matched line, and ends the agent; the
 * task is requeued without counting the attempt.
 */
import { join } from "node:path";
import { type CooldownTracker, saveCooldowns } from "../agents/cooldown.ts";
import * as ev from "../journal/events.ts";
import type { JournalEvent } from "../journal/row.ts";
import { scanNewLines } from "./log_watch.ts";
import type { AgentSession } from "./session.ts";

/** What the guard acts through. */
export interface RateLimitGuardOptions {
  adapter: string;
  cooldowns: CooldownTracker;
  runtimeDir: string;
  journal: (event: JournalEvent) => Promise<void>;
  log: (line: string) => void;
}

/** Watches agents' logs for rate limits. */
export class RateLimitGuard {
  readonly #o: RateLimitGuardOptions;

  constructor(options: RateLimitGuardOptions) {
    this.#o = options;
  }

  /** Seconds left of the adapter's cooldown (0 when it may spawn). */
  remainingS(nowS = Date.now() / 1000): number {
    return this.#o.cooldowns.remaining(this.#o.adapter, nowS);
  }

  /** Scan the session's new log lines; on a rate limit, start the cooldown and end the agent. */
  async check(session: AgentSession): Promise<boolean> {
    const o = this.#o;
    const { match, scannedTo } = await scanNewLines(
      session.logPath,
      session.scannedBytes,
      session.proc.alive,
    );
    session.scannedBytes = scannedTo;
    if (!match) return false;
    const nowS = Date.now() / 1000;
    const entry = o.cooldowns.recordHit(o.adapter, nowS, { rule: match.rule, line: match.line });
    await saveCooldowns(join(o.runtimeDir, "rate_limits.json"), o.cooldowns, nowS).catch(() => {});
    o.log(
      `RateLimitError: ${o.adapter} log of ${session.task.id} matched ${match.rule}: ${
        match.line.slice(0, 160)
      }` +
        ` — spawns blocked for ${Math.round(entry.until - nowS)} s`,
    );
    await o.journal(ev.rateLimited({
      task_id: session.task.id,
      session_id: session.sessionId,
      adapter: o.adapter,
      rule: match.rule,
      line: match.line.slice(0, 500),
      until: Math.round(entry.until),
    }));
    if (session.proc.alive) await session.terminate("rate_limit");
    else session.endedBy ??= "rate_limit";
    return true;
  }
}
