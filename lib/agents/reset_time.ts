/**
 * When a provider's limit resets (pure): the {@link ResetTime} a limit message names — an
 * instant, a delay, a wall-clock time, or the latest of several when one line names more than one
 * (./reset_forms.ts reads them) — resolved against the time it was read ({@link resolveReset}),
 * and the whole second an adapter is parked until ({@link parkUntil}).
 *
 * Never early: a delay's fraction of a second and a time printed to the minute are read as their
 * latest instant. The CLIs print wall-clock resets truncated to the minute (Claude Code's
 * "resets 3pm" is 15:00:00–15:00:59, Codex's "try again at 3:42 PM" 15:42:00–15:42:59), so such a
 * time resolves to the end of its minute; a line naming several resets resolves to the latest.
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
  }
  /** Several forms on one line (`Please retry in 34.5s` and `retryDelay: 34s`): the latest. */
  | { kind: "latest"; of: ResetTime[] };

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

/** Whether `abbr` (upper case) is a zone abbreviation this file resolves. */
export function isZoneAbbreviation(abbr: string): boolean {
  return abbr in ABBREVIATIONS;
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

/** A wall-clock time printed without seconds covers its whole minute. */
const MINUTE_S = 60;

/**
 * `reset` as epoch seconds, read at `nowMs`; a wall-clock time is the next one at or after now
 * (within a few minutes' slack), in its own zone or else `localZone`, and the end of its minute
 * when printed without seconds; several resets, the latest. Undefined when no zone is known.
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
    case "latest": {
      const all = reset.of.map((r) => resolveReset(r, nowMs, localZone))
        .filter((s): s is number => s !== undefined);
      return all.length === 0 ? undefined : Math.max(...all);
    }
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
        return at === undefined
          ? undefined
          : at / 1000 + (reset.second === undefined ? MINUTE_S : 0);
      }
      let at = wallClockMs(today.year, today.month, today.day, reset, zone);
      if (at === undefined) return undefined;
      if (at < nowMs - PAST_SLACK_MS) {
        const tomorrow = dateAt(at + 24 * 3600_000, offset);
        at = wallClockMs(tomorrow.year, tomorrow.month, tomorrow.day, reset, zone)!;
      }
      return at / 1000 + (reset.second === undefined ? MINUTE_S : 0);
    }
  }
}

/**
 * The whole second `reset`, read at `nowMs`, is over: the instant an adapter is parked until,
 * never before the reset. Undefined when it cannot be resolved (an unknown zone).
 */
export function parkUntil(
  reset: ResetTime,
  nowMs: number,
  localZone?: string,
): number | undefined {
  const s = resolveReset(reset, nowMs, localZone);
  // A whole second computed in floating point may come out a hair above it.
  return s === undefined ? undefined : Math.ceil(s - 1e-6);
}
