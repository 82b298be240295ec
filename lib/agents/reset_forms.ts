/**
 * The resets a line of a CLI's output names (pure), in every form the CLIs and the providers'
 * HTTP answers print, read from the CLIs' own texts and their output against the providers'
 * wire formats (tests/fixtures/usage_limits/):
 *
 * - Claude Code: "You've hit your session limit · resets 3pm (America/New_York)", "resets Dec 5,
 *   3:30pm (UTC)" (en-US with the IANA zone in parentheses); "Claude AI usage limit
 *   reached|1763724000" (epoch seconds, the API's own message); older: "5-hour limit reached ∙
 *   resets 3pm", "Your limit will reset at 3pm (America/New_York)";
 * - Codex: "… or try again at 3:42 PM." (today, local time) or "try again at Nov 26th, 2026 3:42
 *   PM."; the OpenAI API: "Please try again in 6m0s" / "in 1.5s" / "20ms" / "in 2h13m";
 *   ChatGPT's `usage_limit_reached` body: `"resets_at": <epoch>`, `"resets_in_seconds": 8000`;
 * - Gemini CLI: "Suggested retry after 34s." (headless), "Access resets at 3:42 PM PST."
 *   (interactive); Google: "Please retry in 34.07s." and `"retryDelay": "34s"`;
 * - spoken: "try again in 2 hours 13 minutes", "resets in 4 days", "retry after 30 seconds";
 * - HTTP headers printed in a log: `retry-after` (seconds or an HTTP date), `retry-after-ms`,
 *   `anthropic-ratelimit-*-reset` (RFC 3339, or epoch seconds for the unified limits),
 *   `x-ratelimit-reset-*` (OpenAI durations such as `1s`, `6m0s`).
 *
 * Only what follows words or names that announce a reset is read. A line naming several resets
 * gives the latest of them (../reset_time.ts resolves it).
 */
import { isZoneAbbreviation, type ResetTime } from "./reset_time.ts";

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** Seconds per duration unit, longest names first so that `ms` is not read as minutes. */
const UNITS: [RegExp, number][] = [
  [/^(?:milliseconds?|ms)$/i, 0.001],
  [/^(?:seconds?|secs?|s)$/i, 1],
  [/^(?:minutes?|mins?|m)$/i, 60],
  [/^(?:hours?|hrs?|h)$/i, 3600],
  [/^(?:days?|d)$/i, 86_400],
];

const UNIT = String
  .raw`(?:milliseconds?|ms|seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)(?![a-z])`;
const PART = String.raw`\d+(?:\.\d+)?\s*${UNIT}`;
/** A duration: number-and-unit parts, run together or spaced ("6m0s", "2 hours 13 minutes"). */
const DURATION = String.raw`${PART}(?:(?:\s*,\s*|\s+and\s+|\s*)${PART})*`;

/** `34.07s`, `1.5s`, `20ms`, `6m0s`, `1h2m3s`, `2 hours 13 minutes`, `30` (seconds) → seconds. */
export function durationSeconds(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+(?:\.\d+)?$/.test(t)) return Number(t);
  if (!new RegExp(`^${DURATION}$`, "i").test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(new RegExp(String.raw`(\d+(?:\.\d+)?)\s*(${UNIT})`, "gi"))) {
    total += Number(m[1]) * UNITS.find(([re]) => re.test(m[2]))![1];
  }
  return total;
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
    else if (isZoneAbbreviation(abbr)) out.zone = abbr;
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
  if (/^\d{9,11}(?:\.\d+)?$/.test(v)) return Number(v);
  if (!/\d{4}|GMT/.test(v)) return undefined;
  const ms = Date.parse(v);
  return Number.isFinite(ms) ? ms / 1000 : undefined;
}

/** `"name": value`, `name: value` or `name=value`, as a header or a JSON field is printed. */
const field = (name: string, value: string) =>
  new RegExp(String.raw`\b${name}["']?\s*[:=]\s*["']?(${value})`, "gi");

const HTTP_DATE = String.raw`(?:[A-Z][a-z]{2}, )?\d{1,2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT`;
const NUMBER = String.raw`\d+(?:\.\d+)?`;

/** Each header- or field-named reset of `line` (see the file's header). */
function* namedFields(line: string): Generator<ResetTime> {
  for (const m of line.matchAll(field("retry-after-ms", NUMBER))) {
    yield { kind: "in", seconds: Number(m[1]) / 1000 };
  }
  for (const m of line.matchAll(field("retry-after", `${HTTP_DATE}|${NUMBER}(?![\\d-])`))) {
    const at = /GMT/.test(m[1]) ? instantOf(m[1]) : undefined;
    if (at !== undefined) yield { kind: "at", epochS: at };
    else if (!/GMT/.test(m[1])) yield { kind: "in", seconds: Number(m[1]) };
  }
  for (const m of line.matchAll(field("anthropic-ratelimit-[a-z0-9-]*reset", "[0-9TZ:.+-]+"))) {
    const at = instantOf(m[1]);
    if (at !== undefined) yield { kind: "at", epochS: at };
  }
  for (const m of line.matchAll(field("x-ratelimit-reset-[a-z]+", "[0-9.hms]+"))) {
    const secs = durationSeconds(m[1]);
    if (secs !== undefined) yield { kind: "in", seconds: secs };
  }
  for (const m of line.matchAll(field("retryDelay", `${NUMBER}s`))) {
    yield { kind: "in", seconds: durationSeconds(m[1])! };
  }
  for (const m of line.matchAll(field("resets_in_seconds", NUMBER))) {
    yield { kind: "in", seconds: Number(m[1]) };
  }
  for (const m of line.matchAll(field("resets_at", String.raw`\d{9,11}`))) {
    yield { kind: "at", epochS: Number(m[1]) };
  }
}

/** Each reset `line` names in words (see the file's header). */
function* spokenResets(line: string): Generator<ResetTime> {
  for (const m of line.matchAll(/limit reached\|(\d{9,11})\b/gi)) {
    yield { kind: "at", epochS: Number(m[1]) };
  }
  for (const m of line.matchAll(/\b(?:resets?|reset at|try again at|retry at)\s+(?:at\s+)?/gi)) {
    const rest = line.slice(m.index + m[0].length);
    const delay = new RegExp(`^in\\s+(${DURATION})`, "i").exec(rest);
    const reset: ResetTime | undefined = delay
      ? { kind: "in", seconds: durationSeconds(delay[1])! }
      : clockAt(rest);
    if (reset) yield reset;
  }
  const after = new RegExp(
    String.raw`\b(?:(?:try again|retry)\s+in|retry\s+after)\s+(${DURATION})`,
    "gi",
  );
  for (const m of line.matchAll(after)) yield { kind: "in", seconds: durationSeconds(m[1])! };
}

/** Every reset `line` names, in the order of the forms above (duplicates once). */
export function resetsNamedIn(line: string): ResetTime[] {
  const seen = new Set<string>();
  const out: ResetTime[] = [];
  for (const reset of [...spokenResets(line), ...namedFields(line)]) {
    const key = JSON.stringify(reset);
    if (!seen.has(key)) {
      seen.add(key);
      out.push(reset);
    }
  }
  return out;
}

/** The reset `line` names: undefined, the one it names, or the latest of several. */
export function resetNamedIn(line: string): ResetTime | undefined {
  return latestOf(resetsNamedIn(line));
}

/** Undefined for none, the one reset, or the latest of several. */
export function latestOf(resets: readonly ResetTime[]): ResetTime | undefined {
  const flat = resets.flatMap((r) => r.kind === "latest" ? r.of : [r]);
  const unique = [...new Map(flat.map((r) => [JSON.stringify(r), r])).values()];
  if (unique.length <= 1) return unique[0];
  return { kind: "latest", of: unique };
}
