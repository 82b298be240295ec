/**
 * A log line as a person reads it (pure). The agent CLIs log JSON events, so a matched line
 * (a rate limit's, lib/agents/rate_limit.ts) is often `{"type":"assistant","message":{…,"text":
 * "API Error: Request rejected (429) · …"}}`: quoting its first characters shows keys, not
 * what the provider said. The journal keeps the raw line; the terminal quotes its message.
 */

/** Keys whose string values are what a CLI's event says in words. */
const MESSAGE_KEYS = new Set(["text", "message", "result", "error", "detail", "msg", "reason"]);

/** How deep a line's JSON is searched for its message. */
const MAX_DEPTH = 8;

/** The first message-like string of `value` (depth first, in key order), if any. */
function messageIn(value: unknown, depth: number): string | undefined {
  if (depth > MAX_DEPTH || value === null || typeof value !== "object") return undefined;
  const entries = Array.isArray(value)
    ? value.map((v) => ["", v] as const)
    : Object.entries(value as Record<string, unknown>);
  for (const [key, v] of entries) {
    // A value of words (a space in it), not a token such as "rate_limit" or "error".
    if (typeof v === "string" && MESSAGE_KEYS.has(key) && /\S\s+\S/.test(v)) return v.trim();
    const inner = messageIn(v, depth + 1);
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/**
 * What `raw` says, at most `max` characters (`…` when cut): the message of a JSON event line,
 * else the line itself, trimmed.
 */
export function lineWords(raw: string, max = 160): string {
  let said = raw.trim();
  if (said.startsWith("{") || said.startsWith("[")) {
    try {
      said = messageIn(JSON.parse(said), 0) ?? said;
    } catch { /* not JSON after all: the line as it is */ }
  }
  return said.length > max ? `${said.slice(0, max)}…` : said;
}
