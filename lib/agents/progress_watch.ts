/**
 * Whether an agent still makes progress, read from the lines it writes (issue 35): an agent
 * whose model endpoint died keeps writing — Codex prints `{"type":"error","message":
 * "Reconnecting... waiting for network (…)"}` every few seconds — so "it wrote something
 * recently" says nothing. A reconnect notice is not progress; any other line is. `status`,
 * `service agents` and the run's terminal say how long an agent has made none and why.
 */
import { durationWords } from "../util/duration_words.ts";
import { printable } from "../util/printable.ts";

/** How long an agent reconnects before the run's terminal and `status` say so (s). */
export const RECONNECT_NOTICE_S = 60;

/** Codex's stderr log line for each failed connection attempt (`codex_api::…: failed to connect`). */
const CODEX_CONNECT_ERROR = /^\S+\s+ERROR codex_api::\S+: failed to connect\b/;
/** A plain line of a CLI retrying its model (`Reconnecting...`, `Retrying in 5s`). */
const PLAIN_RETRY = /^(?:\W+\s*)?(?:Reconnecting\b|Retrying (?:in|after) \d)/i;

/**
 * The notice `line` gives when it says the agent is reconnecting to its model, else undefined
 * (pure). Codex's JSON `error` events whose message starts with "Reconnecting", its
 * connect-error log lines, and plain `Reconnecting…`/`Retrying in N` lines count.
 */
export function reconnectNotice(line: string): string | undefined {
  const text = line.trim();
  if (text.startsWith("{")) {
    try {
      const event = JSON.parse(text) as { type?: unknown; message?: unknown };
      if (event.type === "error" && typeof event.message === "string") {
        return /^Reconnecting\b/.test(event.message) ? event.message : undefined;
      }
    } catch { /* not JSON: read as plain text */ }
    return undefined;
  }
  if (CODEX_CONNECT_ERROR.test(text)) return text.replace(/^\S+\s+/, "");
  return PLAIN_RETRY.test(text) ? text : undefined;
}

/** What a {@link ProgressWatch} knows (epoch ms). */
export interface ProgressState {
  /** The last line that was not a reconnect notice, null before any. */
  lastProgressAt: number | null;
  /** Reconnecting since `since`, the latest notice saying so; absent once progress resumes. */
  reconnecting?: { since: number; message: string };
}

/** Folds an agent's output lines into its {@link ProgressState}. */
export class ProgressWatch {
  #state: ProgressState = { lastProgressAt: null };

  /** The agent wrote `line` at `now` (epoch ms); blank lines change nothing. */
  see(line: string, now: number): void {
    if (line.trim() === "") return;
    const notice = reconnectNotice(line);
    if (notice === undefined) {
      this.#state = { lastProgressAt: now };
      return;
    }
    const since = this.#state.reconnecting?.since ?? now;
    this.#state = { ...this.#state, reconnecting: { since, message: notice.slice(0, 300) } };
  }

  /** The state now. */
  get state(): ProgressState {
    return this.#state;
  }
}

/** How an agent stands, from its heartbeat's figures (epoch seconds) at `now` (pure). */
export interface Quietness {
  /** Seconds since its last output of any kind (null before any). */
  last_output_age_s: number | null;
  /** Seconds since its last line that was not a reconnect notice (null before any). */
  last_progress_age_s: number | null;
  /** Reconnecting to its model for `for_s` seconds, the latest notice being `message`. */
  reconnecting?: { for_s: number; message: string };
}

/** The quietness of a heartbeat at `now` (epoch seconds). */
export function quietness(
  heartbeat: {
    last_output_at: number | null;
    last_progress_at?: number | null;
    reconnecting?: { since: number; message: string };
  },
  now: number,
): Quietness {
  const age = (t: number | null | undefined) =>
    t === null || t === undefined ? null : Math.max(0, Math.floor(now - t));
  return {
    last_output_age_s: age(heartbeat.last_output_at),
    last_progress_age_s: age(heartbeat.last_progress_at),
    ...(heartbeat.reconnecting
      ? {
        reconnecting: {
          for_s: age(heartbeat.reconnecting.since) ?? 0,
          message: heartbeat.reconnecting.message,
        },
      }
      : {}),
  };
}

/** What the run's terminal and `status` say of an agent reconnecting for `for_s` seconds. */
export function reconnectWords(reconnecting: { for_s: number; message: string }): string {
  return `no progress for ${durationWords(reconnecting.for_s)}: it keeps reconnecting to its ` +
    `model (${JSON.stringify(printable(reconnecting.message))}); its model endpoint may be down`;
}
