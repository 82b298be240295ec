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
 *   Code's `"error":"rate_limit"` and `"api_error_status":429`), and so do provider markers on any
 *   other line: "hit your limit", "quota exceeded", "rate_limit_error", RESOURCE_EXHAUSTED.
 * - Risky bare tokens (413, 429, 401, 403, 504, timeout, rate limit, unauthorized, too many
 *   requests) count only on a line that also has error context — error, status, http, code,
 *   exception, failed, failure or traceback, as whole words, any case — or on a line the CLI
 *   marks as an error.
 */
import { parseAnyLog } from "./adapters/generic.ts";
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
}

type Hit = { rule: string; category: RateLimitCategory };

const PROVIDER_MARKERS: [RegExp, string][] = [
  [/hit your limit/i, "provider:hit_your_limit"],
  [/quota exceeded|exceeded your current quota|insufficient_quota/i, "provider:quota_exceeded"],
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
  else if (event.kind === "text" || event.kind === "record") {
    hit = textRules(event.raw.trim(), false);
  } else if (event.kind === "error") hit = textRules(event.raw.trim(), true);
  return hit && { lineNumber: event.line, line: event.raw, ...hit };
}

/** Every matched line among `events`, in order. */
function rateLimitMatches(events: readonly SessionEvent[]): RateLimitMatch[] {
  return events.flatMap((e) => matchOf(e) ?? []);
}

/** Every matched line of `text`, read by `parse` (an adapter's; default: any format). */
export function scanLog(text: string, parse: LogParser = parseAnyLog): RateLimitMatch[] {
  return rateLimitMatches(parse(text));
}

/** The first match that means provider throttling (starts a cooldown), if any. */
export function firstRateLimit(matches: RateLimitMatch[]): RateLimitMatch | undefined {
  return matches.find((m) => m.category === "rate_limit");
}
