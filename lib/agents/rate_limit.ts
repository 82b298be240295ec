/**
 * The rate-limit log scanner (spec §7.3 "RateLimitError" and "False rate-limit kill"). Pure: it
 * reads log lines and reports each line that shows provider throttling or a provider failure,
 * with the rule that matched.
 *
 * - Structured tool traffic and heartbeats are skipped: JSON lines whose `type` is `tool_use`,
 *   `tool_call`, `tool_result`, `heartbeat` (and the like), Claude Code `assistant`/`user` lines
 *   whose content holds `tool_use`/`tool_result` blocks, Codex `item.*` events of commands,
 *   file changes and MCP tool calls.
 * - Known conversation lines (the model's own prose: Claude Code `assistant` messages from a real
 *   model, successful `result` lines, `system` init, Codex agent messages, Gemini `message` and
 *   `init`) are skipped too: a model writing "fixed the 429 error handling" is not throttling.
 * - Provider markers count anywhere else: "hit your limit", "quota exceeded", "rate_limit_error",
 *   a stream-json `rate_limit_event` whose status is `rejected`, an Anthropic
 *   `{"type":"error","error":{"type":"rate_limit_error"}}`, Claude Code's `"error":"rate_limit"`
 *   and `"api_error_status":429`.
 * - Risky bare tokens (413, 429, 401, 403, 504, timeout, rate limit, unauthorized, too many
 *   requests) count only on a line that also has error context: error, status, http, code,
 *   exception, failed, failure or traceback, as whole words, any case.
 */

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
type Json = Record<string, unknown>;

const TOOL_TYPES = new Set([
  "tool_use",
  "tool_call",
  "tool_result",
  "tool_call_result",
  "tool_output",
  "function_call",
  "function_call_output",
  "mcp_tool_call",
  "heartbeat",
]);
const CODEX_TOOL_ITEMS = new Set([
  "command_execution",
  "file_change",
  "mcp_tool_call",
  "web_search",
  "todo_list",
]);
const CODEX_PROSE_ITEMS = new Set(["agent_message", "reasoning"]);

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

function obj(v: unknown): Json | undefined {
  return v && typeof v === "object" && !Array.isArray(v) ? v as Json : undefined;
}

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

function contentTypes(row: Json): string[] {
  const content = obj(row.message)?.content;
  if (!Array.isArray(content)) return [];
  return content.map((c) => String(obj(c)?.type ?? ""));
}

/** `skip`, a structured hit, or `text` (apply the text rules; `error` when the row is an error). */
function classifyJson(row: Json): "skip" | Hit | { text: true; error: boolean } {
  const type = String(row.type ?? "");
  if (TOOL_TYPES.has(type) || TOOL_TYPES.has(String(row.subtype ?? ""))) return "skip";
  const blocks = contentTypes(row);
  if (blocks.some((t) => TOOL_TYPES.has(t))) return "skip";
  const item = obj(row.item);
  if (type.startsWith("item.") && item && CODEX_TOOL_ITEMS.has(String(item.type))) return "skip";

  if (type === "rate_limit_event") {
    const info = obj(row.rate_limit_info) ?? row;
    return info.status === "rejected"
      ? { rule: "claude:rate_limit_event_rejected", category: "rate_limit" }
      : "skip";
  }
  const error = obj(row.error);
  if (type === "error" && error?.type === "rate_limit_error") {
    return { rule: "anthropic:rate_limit_error", category: "rate_limit" };
  }
  if (row.error === "rate_limit") {
    return { rule: "claude:error_rate_limit", category: "rate_limit" };
  }
  if (row.api_error_status === 429) {
    return { rule: "claude:api_error_status_429", category: "rate_limit" };
  }

  const isError = type === "error" || row.is_error === true || row.error !== undefined ||
    type.endsWith(".failed") || row.status === "error";
  if (isError) return { text: true, error: true };
  const synthetic = obj(row.message)?.model === "<synthetic>";
  const prose = ((type === "assistant" || type === "user") && !synthetic) ||
    (type === "result" && row.is_error === false) ||
    (type === "result" && row.status === "success") ||
    type === "system" || type === "init" || type === "message" ||
    type === "thread.started" || type === "turn.started" || type === "turn.completed" ||
    (type.startsWith("item.") && item !== undefined && CODEX_PROSE_ITEMS.has(String(item.type)));
  return prose ? "skip" : { text: true, error: false };
}

/** The hit of one log line, or undefined. */
export function scanLine(line: string): Hit | undefined {
  const t = line.trim();
  if (t === "") return undefined;
  if (t.startsWith("{")) {
    let row: Json | undefined;
    try {
      row = obj(JSON.parse(t));
    } catch { /* a line that only looks like JSON: scan it as text */ }
    if (row) {
      const c = classifyJson(row);
      if (c === "skip") return undefined;
      if ("rule" in c) return c;
      return textRules(t, c.error);
    }
  }
  return textRules(t, false);
}

/** Every matched line of `text` (or of an array of lines), in order. */
export function scanLog(text: string | string[]): RateLimitMatch[] {
  const lines = typeof text === "string" ? text.split("\n") : text;
  const out: RateLimitMatch[] = [];
  lines.forEach((line, i) => {
    const hit = scanLine(line);
    if (hit) out.push({ lineNumber: i + 1, line, ...hit });
  });
  return out;
}

/** The first match that means provider throttling (starts a cooldown), if any. */
export function firstRateLimit(matches: RateLimitMatch[]): RateLimitMatch | undefined {
  return matches.find((m) => m.category === "rate_limit");
}
