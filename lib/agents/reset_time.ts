/**
 * When a provider's limit resets, as the CLIs and HTTP responses name it (pure). A phrase is read
 * into a {@link ResetTime} — an instant, a delay, or a wall-clock time — and resolved against the
 * time it was read ({@link resolveReset}). The forms, collected from the CLIs' own texts:
 *
 * - Claude Code: "You've hit your session limit · resets 3pm (America/New_York)", "resets Dec 5,
 *   3:30pm (UTC)" (its `Vee()` formats the time en-US with the IANA zone in parentheses); older
 *   releases: "5-hour limit reached ∙ resets 3pm", "Claude AI usage limit reached|1763724000"
 *   (epoch seconds), "Your limit will reset at 3pm (America/New_York)";
 * - Codex: "… or try again at 3:42 PM." (today, local time) or "try again at Nov 26th, 2026 3:42
 *   PM." (`%b %-d{suffix}, %Y %-I:%M %p`); OpenAI: "Please try again in 6m0s" / "in 1.5s" / "20ms";
 * - Gemini CLI: "Access resets at 3:42 PM PST." (en-US, short zone name), Google's "Please retry
 *   in 34.07s." and `"retryDelay": "34s"`;
 * - HTTP headers printed in a log: `retry-after` (seconds or an HTTP date), `retry-after-ms`,
 *   `anthropic-ratelimit-*-reset` (RFC 3339, or epoch seconds for the unified limits),
 *   `x-ratelimit-reset-*` (OpenAI durations such as `1s`, `6m0s`).
 *
 * A time without a zone is the local time of this machine: the CLIs run here and print theirs.
 */

/** A reset time as a message names it. */
export type ResetTime =
  /** An instant (epoch seconds). */
  | { kind: "at"; epochS: number }
  /** A delay from when the message was read. */
  | { kind: "in"; seconds: number }
  /** A wall-clock time, with the date and zone when the message names them. */
  | {
    kind: "clock";
    hour: number;
    minute: number;
    second?: number;
    /** Month (1–12) and day, and the year when named. */
    date?: { year?: number; month: number; day: number };
    /** An IANA zone, `UTC`, a fixed offset (`+05:30`) or a US/European abbreviation (`PST`). */
    zone?: string;
  };

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** Offsets (minutes east of UTC) of the zone abbreviations en-US prints (`timeZoneName: short`). */
const ABBREVIATIONS: Record<string, number> = {
  UTC: 0,
  GMT: 0,
  Z: 0,
  PST: -480,
  PDT: -420,
  MST: -420,
  MDT: -360,
  CST: -360,
  CDT: -300,
  EST: -300,
  EDT: -240,
  AKST: -540,
  AKDT: -480,
  HST: -600,
  BST: 60,
  CET: 60,
  CEST: 120,
  EET: 120,
  EEST: 180,
  IST: 330,
  JST: 540,
};

/** `34.07s`, `1.5s`, `20ms`, `6m0s`, `1h2m3s`, `30` (seconds) → seconds. */
export function durationSeconds(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(t)) return Number(t);
  const m =
    /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/
      .exec(t);
  if (!m || !m.slice(1).some((x) => x !== undefined)) return undefined;
  const [h, min, s, ms] = m.slice(1).map((x) => Number(x ?? 0));
  return h * 3600 + min * 60 + s + ms / 1000;
}

/** `2h 13m`, `5 hours`, `45 minutes`, `30 seconds` → seconds. */
function wordsDuration(text: string): number | undefined {
  let total = 0;
  let any = false;
  for (
    const m of text.matchAll(
      /(\d+(?:\.\d+)?)\s*(h|hr|hrs|hours?|m|min|mins|minutes?|s|sec|secs|seconds?)\b/gi,
    )
  ) {
    const n = Number(m[1]);
    const unit = m[2].toLowerCase();
    total += unit.startsWith("h") ? n * 3600 : unit.startsWith("m") ? n * 60 : n;
    any = true;
  }
  return any ? total : undefined;
}

const CLOCK = new RegExp(
  String
    .raw`(?:(?<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? (?<day>\d{1,2})(?:st|nd|rd|th)?,? (?:(?<year>\d{4}),? )?(?:at )?)?` +
    String
      .raw`(?<hour>\d{1,2})(?::(?<minute>\d{2}))?(?::(?<second>\d{2}))? ?(?<ampm>[ap]\.?m\.?)?` +
    String
      .raw`(?: ?\((?<iana>[A-Za-z_]+(?:/[A-Za-z0-9_+-]+)*)\)| (?<abbr>UTC|GMT|[A-Z]{2,4}T|[A-Z]{3,4})(?<off>[+-]\d{1,2}(?::?\d{2})?)?)?`,
  "i",
);

/** A wall-clock time at the start of `text` ("3pm (UTC)", "Nov 26th, 2026 3:42 PM", "15:00"). */
export function clockAt(text: string): ResetTime | undefined {
  const m = CLOCK.exec(text);
  if (!m || m.index !== 0 || !m.groups) return undefined;
  const g = m.groups;
  // A bare number is a clock only with minutes or am/pm ("resets 3" says nothing).
  if (g.minute === undefined && g.ampm === undefined) return undefined;
  let hour = Number(g.hour);
  const minute = Number(g.minute ?? 0);
  if (hour > 24 || minute > 59) return undefined;
  const ampm = g.ampm?.toLowerCase().replaceAll(".", "");
  if (ampm) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (ampm === "pm" ? 12 : 0);
  }
  const out: Extract<ResetTime, { kind: "clock" }> = { kind: "clock", hour: hour % 24, minute };
  if (g.second !== undefined) out.second = Number(g.second);
  if (g.mon) {
    out.date = { month: MONTHS.indexOf(g.mon.slice(0, 3).toLowerCase()) + 1, day: Number(g.day) };
    if (g.year) out.date.year = Number(g.year);
  }
  if (g.iana) out.zone = g.iana;
  else if (g.abbr) {
    const abbr = g.abbr.toUpperCase();
    if (g.off && (abbr === "UTC" || abbr === "GMT")) out.zone = normaliseOffset(g.off);
    else if (abbr in ABBREVIATIONS) out.zone = abbr;
  }
  return out;
}

function normaliseOffset(off: string): string {
  const m = /^([+-])(\d{1,2}):?(\d{2})?$/.exec(off)!;
  return `${m[1]}${m[2].padStart(2, "0")}:${m[3] ?? "00"}`;
}

/** An HTTP date, an RFC 3339 time or epoch seconds (a header's value) as epoch seconds. */
function instantOf(value: string): number | undefined {
  const v = value.trim().replace(/^["']|["',;]+$/g, "");
  if (/^\d{9,11}(?:\.\d+)?$/.test(v)) return Math.floor(Number(v));
  if (!/\d{4}|GMT/.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : undefined;
}

/**
 * A reset named by an HTTP header printed in a log line (`retry-after: 30`, `retry-after-ms`,
 * `anthropic-ratelimit-tokens-reset: 2026-11-21T10:00:00Z`, `x-ratelimit-reset-requests: 6m0s`,
 * Google's `"retryDelay": "34s"`), or undefined.
 */
function headerReset(line: string): ResetTime | undefined {
  const ms = /\bretry-after-ms["']?\s*[:=]\s*["']?(\d+(?:\.\d+)?)/i.exec(line);
  if (ms) return { kind: "in", seconds: Number(ms[1]) / 1000 };
  const ra = /\bretry-after["']?\s*[:=]\s*["']?([^"'\n]+?)["']?\s*(?:[,}]|$)/i.exec(line);
  if (ra) {
    const secs = durationSeconds(ra[1]);
    if (secs !== undefined) return { kind: "in", seconds: secs };
    const at = instantOf(ra[1]);
    if (at !== undefined) return { kind: "at", epochS: at };
  }
  const anthropic = /\banthropic-ratelimit-[a-z0-9-]*reset["']?\s*[:=]\s*["']?([0-9TZ:.+-]+)/i
    .exec(line);
  if (anthropic) {
    const at = instantOf(anthropic[1]);
    if (at !== undefined) return { kind: "at", epochS: at };
  }
  const openai = /\bx-ratelimit-reset-[a-z]+["']?\s*[:=]\s*["']?([0-9.hms]+)/i.exec(line);
  if (openai) {
    const secs = durationSeconds(openai[1]);
    if (secs !== undefined) return { kind: "in", seconds: secs };
  }
  const google = /"retryDelay"\s*:\s*"([0-9.]+s)"/.exec(line);
  if (google) return { kind: "in", seconds: durationSeconds(google[1])! };
  return undefined;
}

/**
 * The reset a limit message names, in any of the CLIs' forms (see the file's header), or
 * undefined. Only what follows words that announce a reset is read.
 */
export function resetNamedIn(line: string): ResetTime | undefined {
  const epoch = /limit reached\|(\d{9,11})\b/i.exec(line);
  if (epoch) return { kind: "at", epochS: Number(epoch[1]) };
  for (const m of line.matchAll(/\b(?:resets?|reset at|try again at|retry at)\s+(?:at\s+)?/gi)) {
    const rest = line.slice(m.index + m[0].length);
    const inWords = /^in\s+([^.·∙•"\n]+)/i.exec(rest);
    if (inWords) {
      const secs = durationSeconds(inWords[1].replace(/\s+/g, "")) ?? wordsDuration(inWords[1]);
      if (secs !== undefined) return { kind: "in", seconds: secs };
      continue;
    }
    const clock = clockAt(rest);
    if (clock) return clock;
  }
  const after = /\b(?:try again|retry) in\s+([0-9.]+\s*(?:ms|s|m|h)(?:[0-9.]+\s*(?:ms|s|m))*)/i
    .exec(line);
  if (after) {
    const secs = durationSeconds(after[1].replace(/\s+/g, ""));
    if (secs !== undefined) return { kind: "in", seconds: secs };
  }
  return headerReset(line);
}

/** The UTC offset of `zone` at `epochMs`, in ms (undefined for a zone Intl does not know). */
function zoneOffsetMs(epochMs: number, zone: string): number | undefined {
  if (zone in ABBREVIATIONS) return ABBREVIATIONS[zone] * 60_000;
  const fixed = /^([+-])(\d{2}):(\d{2})$/.exec(zone);
  if (fixed) {
    return (fixed[1] === "-" ? -1 : 1) * (Number(fixed[2]) * 60 + Number(fixed[3])) * 60_000;
  }
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    }).formatToParts(new Date(epochMs));
  } catch {
    return undefined; // not a zone Intl knows
  }
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value ?? 0);
  const wall = Date.UTC(get("year"), get("month") - 1, get("day"), get("hour"), get("minute"));
  return wall - Math.floor(epochMs / 60_000) * 60_000;
}

/** The calendar date (year, month 1–12, day) at `epochMs` in a zone of the given offset. */
function dateAt(epochMs: number, offsetMs: number): { year: number; month: number; day: number } {
  const d = new Date(epochMs + offsetMs);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** Epoch ms of a wall-clock time in `zone` (DST-correct for IANA zones). */
function wallClockMs(
  y: number,
  mo: number,
  d: number,
  clock: { hour: number; minute: number; second?: number },
  zone: string,
): number | undefined {
  const guess = Date.UTC(y, mo - 1, d, clock.hour, clock.minute, clock.second ?? 0);
  const first = zoneOffsetMs(guess, zone);
  if (first === undefined) return undefined;
  const second = zoneOffsetMs(guess - first, zone)!;
  return guess - second;
}

/** A reset this far back is read as the next one (the message was printed a moment ago). */
const PAST_SLACK_MS = 10 * 60_000;

/**
 * `reset` as epoch seconds, read at `nowMs`; a wall-clock time is the next one at or after now
 * (within a few minutes' slack), in its own zone or else `localZone`. Undefined when the zone is
 * unknown.
 */
export function resolveReset(
  reset: ResetTime,
  nowMs: number,
  localZone = Intl.DateTimeFormat().resolvedOptions().timeZone,
): number | undefined {
  switch (reset.kind) {
    case "at":
      return reset.epochS;
    case "in":
      return nowMs / 1000 + reset.seconds;
    case "clock": {
      const zone = reset.zone ?? localZone;
      const offset = zoneOffsetMs(nowMs, zone);
      if (offset === undefined) return undefined;
      const today = dateAt(nowMs, offset);
      if (reset.date) {
        let year = reset.date.year ?? today.year;
        let at = wallClockMs(year, reset.date.month, reset.date.day, reset, zone);
        if (at !== undefined && reset.date.year === undefined && at < nowMs - PAST_SLACK_MS) {
          year += 1; // "Jan 2" read on Dec 30
          at = wallClockMs(year, reset.date.month, reset.date.day, reset, zone);
        }
        return at === undefined ? undefined : at / 1000;
      }
      let at = wallClockMs(today.year, today.month, today.day, reset, zone);
      if (at === undefined) return undefined;
      if (at < nowMs - PAST_SLACK_MS) {
        const tomorrow = dateAt(at + 24 * 3600_000, offset);
        at = wallClockMs(tomorrow.year, tomorrow.month, tomorrow.day, reset, zone)!;
      }
      return at / 1000;
    }
  }
}
