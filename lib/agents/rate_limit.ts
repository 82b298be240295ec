/**
 * The rate-limit reader (spec §7.3 "RateLimitError" and "False rate-limit kill"). Pure: it reads
 * a session log's events (its adapter parsed the log, ../session_events.ts) and reports each line
 * that shows provider throttling or a provider failure, with the rule that matched.
 *
 * - Tool traffic and heartbeats are never read: tool calls and their output, in any CLI's shape
 *   (the adapter knows them), and any JSON line whose `type` names a tool call, tool result or
 *   heartbeat.
 * - The model's own words and the CLI's bookkeeping (Claude Code `assistant` messages from a real
 *   model, successful `result` lines, init lines, Codex agent messages, Gemini `message` lines)
 *   are not read either: a model writing "fixed the 429 error handling" is not throttling.
 * - The provider's own structured signals count (the adapter names them: a stream-json
 *   `rate_limit_event` whose status is `rejected`, an Anthropic `rate_limit_error` body, Claude
 *   Code's `"error":"rate_limit"` and `"api_error_status":429`), and so do the CLIs' usage-limit
 *   messages and provider markers on any other line: "hit your (session|usage|…) limit", "usage
 *   limit reached", "quota exceeded", "exhausted your quota", "rate_limit_error",
 *   RESOURCE_EXHAUSTED.
 * - A match carries the reset time its line names, in any form (./reset_forms.ts) — whatever rule
 *   matched the line first (Claude Code's `"error":"rate_limit"` line also holds "Claude AI usage
 *   limit reached|<epoch>") — together with those the few plain lines after it name
 *   (`retry-after: 30`, printed with the response's status line); several make the latest. The
 *   adapter is parked until then, else for the cooldown.
 * - Risky bare tokens (413, 429, 401, 403, 504, timeout, rate limit, unauthorized, too many
 *   requests) count only on a line that also has error context — error, status, http, code,
 *   exception, failed, failure or traceback, as whole words, any case — or on a line the CLI
 *   marks as an error.
 */
import { parseAnyLog } from "./adapters/generic.ts";
import { latestOf, resetsNamedIn } from "./reset_forms.ts";
import type { ResetTime } from "./reset_time.ts";
import type { LogParser, SessionEvent } from "./session_events.ts";

/** What a match means: only `rate_limit` starts a spawn cooldown. */
export type RateLimitCategory = "rate_limit" | "auth" | "timeout" | "payload";

/** One matched log line. */
export interface RateLimitMatch {
  /** 1-based line number in the scanned text. */
  lineNumber: number;
  line: string;
  /** Name of the rule that matched, e.g. `token:429` or `anthropic:rate_limit_error`. */
  rule: string;
  category: RateLimitCategory;
  /** When the limit resets, as the log names it (absent: it names none). */
  reset?: ResetTime;
}

type Hit = { rule: string; category: RateLimitCategory; reset?: ResetTime };

const PROVIDER_MARKERS: [RegExp, string][] = [
  [/\b(?:hit|reached) your (?:[\w'’-]+ ){0,3}limit\b/i, "provider:hit_your_limit"],
  [/\b(?:usage|\d+-hour|session|weekly) limit reached\b/i, "provider:usage_limit_reached"],
  [
    /quota exceeded|exceeded your current quota|insufficient_quota|exhausted your (?:daily )?quota/i,
    "provider:quota_exceeded",
  ],
  [/RESOURCE_EXHAUSTED/, "provider:resource_exhausted"],
  [/rate_limit_error/, "provider:rate_limit_error"],
  [/rate_limit_exceeded/, "provider:rate_limit_exceeded"],
];

const RISKY_TOKENS: [RegExp, string, RateLimitCategory][] = [
  [/\b429\b/, "token:429", "rate_limit"],
  [/\brate[ -]?limit(?:ed|s|ing)?\b/i, "token:rate_limit", "rate_limit"],
  [/\btoo many requests\b/i, "token:too_many_requests", "rate_limit"],
  [/\b401\b/, "token:401", "auth"],
  [/\b403\b/, "token:403", "auth"],
  [/\bunauthori[sz]ed\b/i, "token:unauthorized", "auth"],
  [/\b504\b/, "token:504", "timeout"],
  [/\btime(?:d)?[ -]?out\b/i, "token:timeout", "timeout"],
  [/\b413\b/, "token:413", "payload"],
];

const ERROR_CONTEXT = /\b(?:error|status|http|code|exception|failed|failure|traceback)\b/i;

function textRules(line: string, contextKnown: boolean): Hit | undefined {
  for (const [re, rule] of PROVIDER_MARKERS) {
    if (re.test(line)) return { rule, category: "rate_limit" };
  }
  if (!contextKnown && !ERROR_CONTEXT.test(line)) return undefined;
  for (const [re, rule, category] of RISKY_TOKENS) {
    if (re.test(line)) return { rule, category };
  }
  return undefined;
}

/** The match of one event, or undefined (events of tool traffic and prose never match). */
function matchOf(event: SessionEvent): RateLimitMatch | undefined {
  let hit: Hit | undefined;
  if (event.kind === "rate_limit") hit = { rule: event.rule, category: "rate_limit" };
  else if (event.kind === "usage_limit") {
    hit = { rule: event.rule, category: "rate_limit", reset: event.reset };
  } else if (event.kind === "text" || event.kind === "record") {
    hit = textRules(event.raw.trim(), false);
  } else if (event.kind === "error") hit = textRules(event.raw.trim(), true);
  return hit && { lineNumber: event.line, line: event.raw, ...hit };
}

/** Plain lines after a match that may still name its reset (headers after a status line). */
const RESET_LOOKAHEAD = 5;

/** Every reset a throttling match's line, or the plain lines right after it, names. */
function resetsNear(events: readonly SessionEvent[], i: number): ResetTime[] {
  const found = resetsNamedIn(events[i].raw);
  for (let j = i + 1; j < events.length && j <= i + RESET_LOOKAHEAD; j++) {
    const e = events[j];
    // Tool traffic, prose or the next limit: the response's lines have ended.
    if (e.kind !== "text" && e.kind !== "record" && e.kind !== "error") break;
    found.push(...resetsNamedIn(e.raw));
  }
  return found;
}

/** Every matched line among `events`, in order. */
function rateLimitMatches(events: readonly SessionEvent[]): RateLimitMatch[] {
  return events.flatMap((e, i) => {
    const match = matchOf(e);
    if (!match || match.category !== "rate_limit") return match ?? [];
    const reset = latestOf([...match.reset ? [match.reset] : [], ...resetsNear(events, i)]);
    return reset ? { ...match, reset } : match;
  });
}

/** Every matched line of `text`, read by `parse` (an adapter's; default: any format). */
export function scanLog(text: string, parse: LogParser = parseAnyLog): RateLimitMatch[] {
  return rateLimitMatches(parse(text));
}

/**
 * The match that parks the adapter, if any: the first throttling match that names its reset time,
 * else the first throttling match (the cooldown applies).
 */
export function firstRateLimit(matches: RateLimitMatch[]): RateLimitMatch | undefined {
  const throttled = matches.filter((m) => m.category === "rate_limit");
  return throttled.find((m) => m.reset) ?? throttled[0];
}
