/**
 * `GET /healthz` and `GET /readyz` (DESIGN.md §17), decided from facts in memory (pure): no
 * journal, no store, no disk, so a probe every second costs nothing.
 *
 * - Alive: the server's background tick (orphan sweep, export, access log) finished within
 *   {@link stuckAfterMs} of its interval, and so did the live run's loop (it decides a tick
 *   every second, so a loop blocked on anything — a hung git, a deadlock — stops ticking). 503
 *   `stuck` otherwise: a liveness probe restarts the process, and `service run` resumes the run.
 * - Ready: the server serves (not shutting down) and, for `service run`, its run's journal is open
 *   and its loop runs. 503 `starting` or `stopping` otherwise: no traffic is sent its way.
 */

/** What the probes look at. */
export interface HealthFacts {
  now: number;
  /** When the server's background tick last finished (ms), and how often it is due. */
  serverTick?: { at: number; everyMs: number };
  /** When the live run's loop last decided a tick (ms), and how often it is due. */
  runTick?: { at: number; everyMs: number };
  /** The server is shutting down. */
  closing: boolean;
  /** `service run` listens but its loop is not open yet (its journal not yet written). */
  runStarting: boolean;
}

/** A probe's answer: the status and its one word. */
export interface ProbeAnswer {
  ok: boolean;
  word: "ok" | "stuck" | "ready" | "starting" | "stopping";
}

/** How long a tick may be overdue before its loop is stuck: a minute, or three intervals. */
export function stuckAfterMs(everyMs: number): number {
  return Math.max(60_000, 3 * everyMs);
}

function overdue(tick: { at: number; everyMs: number } | undefined, now: number): boolean {
  return tick !== undefined && now - tick.at > stuckAfterMs(tick.everyMs);
}

/** `GET /healthz`. */
export function liveness(f: HealthFacts): ProbeAnswer {
  if (overdue(f.serverTick, f.now) || overdue(f.runTick, f.now)) {
    return { ok: false, word: "stuck" };
  }
  return { ok: true, word: "ok" };
}

/** `GET /readyz`. */
export function readiness(f: HealthFacts): ProbeAnswer {
  if (f.closing) return { ok: false, word: "stopping" };
  if (f.runStarting && f.runTick === undefined) return { ok: false, word: "starting" };
  return { ok: true, word: "ready" };
}
