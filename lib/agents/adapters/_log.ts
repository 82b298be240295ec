/**
 * The walk every adapter's log parser shares: each line is read once — plain text, or a JSON
 * object handed to the CLI's {@link LogFormat} — and becomes events (../session_events.ts).
 *
 * A structured line is, in this order: tool traffic (the format's own shapes first, then any line
 * whose `type` or `subtype` names a tool call or result) or a heartbeat, the provider's own
 * throttling signal, an error (`type: "error"`, `is_error: true`, an `error` field, a `*.failed`
 * type, `status: "error"`), the model's words or the CLI's bookkeeping, else a plain record. Tool
 * traffic comes first so that nothing a tool printed is ever read as the CLI's own error (spec
 * §7.3 "False rate-limit kill"). An error, a record, a plain line or a throttling signal that
 * holds the CLI's own usage-limit message naming its reset time ({@link LogFormat.limit}) is a
 * `usage_limit` event; the model's words and tool traffic never are.
 */
import type { ResetTime } from "../reset_time.ts";
import type {
  RateLimitEvent,
  SessionEvent,
  SessionStartEvent,
  ToolCallEvent,
  ToolOutputEvent,
  UsageEvent,
  UsageLimitEvent,
} from "../session_events.ts";

/** A parsed JSON object line. */
export type Json = Record<string, unknown>;

/** Where a line is: what every event carries. */
export interface Where {
  line: number;
  raw: string;
}

/** Usage as it accumulates over one walk: fed every line, asked once at the end. */
export interface UsageTally {
  /** A structured line. */
  row?(row: Json, at: Where): void;
  /** A plain line. */
  text?(at: Where): void;
  /** The session's usage as the log stated it, if it did. */
  end(): UsageEvent | undefined;
}

/** What one CLI's structured lines mean; every member is optional. */
export interface LogFormat {
  /** Tool calls and outputs in the CLI's own shapes; empty or undefined when none. */
  tools?(row: Json, at: Where): (ToolCallEvent | ToolOutputEvent)[] | undefined;
  /** The provider's throttling signal, or `quiet` for a signal that says all is well. */
  signal?(row: Json, at: Where): RateLimitEvent | UsageLimitEvent | "quiet" | undefined;
  /**
   * The CLI's own usage- or rate-limit message in a line (plain text, or an error or record line
   * as written), when it names its reset time: the rule and the reset.
   */
  limit?(line: string): { rule: string; reset: ResetTime } | undefined;
  /** The session's start (its id and model). */
  session?(row: Json, at: Where): SessionStartEvent | undefined;
  /** True for the model's words and the CLI's bookkeeping. */
  quiet?(row: Json): boolean;
  /** The human part of an error line in the CLI's own shape (else `error.message`/`message`). */
  errorMessage?(row: Json): string | undefined;
  /** A fresh usage tally for one walk. */
  usage?(): UsageTally;
}

/** Types (or subtypes) of tool traffic in any CLI's output. */
const TOOL_TYPES = new Set([
  "tool_use",
  "tool_call",
  "tool_result",
  "tool_call_result",
  "tool_output",
  "function_call",
  "function_call_output",
  "mcp_tool_call",
]);

/** Whether `type` names tool traffic. */
export function isToolType(type: unknown): boolean {
  return typeof type === "string" && TOOL_TYPES.has(type);
}

/** `v` as an object, if it is one. */
export function obj(v: unknown): Json | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) ? v as Json : undefined;
}

/** `v` as a string, if it is one. */
export function str(v: unknown): string | undefined {
  return typeof v === "string" ? v : undefined;
}

/** The text of a tool result's `content`: a string, or text blocks (`[{type: "text", text}]`). */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => str(obj(b)?.text) ?? "").join("\n");
}

/** `v` as a finite number, else 0. */
export function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

/**
 * The human part of a structured line: `error.message` or `message`. A provider's JSON body
 * wrapped in the message ("[API Error: {…"message":"…"…}]", as Gemini CLI prints it) gives the
 * provider's own message.
 */
function rowMessage(row: Json): string | undefined {
  const msg = obj(row.error)?.message ?? row.message;
  if (typeof msg !== "string") return undefined;
  const inner = /"message":\s*"((?:[^"\\]|\\.)*)"/.exec(msg);
  if (!inner) return msg.trim();
  try {
    return (JSON.parse(`"${inner[1]}"`) as string).trim();
  } catch {
    return msg.trim();
  }
}

function isErrorRow(row: Json): boolean {
  const type = String(row.type ?? "");
  return type === "error" || row.is_error === true || row.error !== undefined ||
    type.endsWith(".failed") || row.status === "error";
}

/** `at` as a `usage_limit` event when a format reads its line as its CLI's limit message. */
function limitEvent(formats: readonly LogFormat[], at: Where): UsageLimitEvent | undefined {
  for (const f of formats) {
    const found = f.limit?.(at.raw);
    if (found) return { kind: "usage_limit", ...at, ...found };
  }
  return undefined;
}

function rowEvents(formats: readonly LogFormat[], row: Json, at: Where): SessionEvent[] {
  for (const f of formats) {
    const tools = f.tools?.(row, at);
    if (tools && tools.length > 0) return tools;
  }
  if (isToolType(row.type) || isToolType(row.subtype)) return [{ kind: "tool_call", ...at }];
  if (row.type === "heartbeat" || row.subtype === "heartbeat") return [{ kind: "message", ...at }];
  for (const f of formats) {
    const signal = f.signal?.(row, at);
    if (signal === "quiet") return [{ kind: "message", ...at }];
    // A throttling signal naming no reset, on a line holding the CLI's limit message that does.
    if (signal) return [signal.kind === "rate_limit" ? limitEvent(formats, at) ?? signal : signal];
  }
  if (isErrorRow(row)) {
    const own = formats.map((f) => f.errorMessage?.(row)).find((m) => m !== undefined);
    return [
      limitEvent(formats, at) ??
        { kind: "error", ...at, message: own ?? rowMessage(row) ?? at.raw.trim() },
    ];
  }
  for (const f of formats) {
    const start = f.session?.(row, at);
    if (start) return [start];
  }
  if (formats.some((f) => f.quiet?.(row))) return [{ kind: "message", ...at }];
  const limit = limitEvent(formats, at);
  if (limit) return [limit];
  const message = rowMessage(row);
  return [{ kind: "record", ...at, ...(message === undefined ? {} : { message }) }];
}

/** The JSON object lines of `text` (a record file of a CLI's, not its session log). */
export function jsonRows(text: string): Json[] {
  const rows: Json[] = [];
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const row = obj(JSON.parse(t));
      if (row) rows.push(row);
    } catch { /* not JSON */ }
  }
  return rows;
}

/**
 * The events of `text` read with `formats` (a CLI's own, or several for a command of unknown
 * make, earlier ones first). The usage event, if any, comes last: the first format's that has one.
 */
export function parseLogWith(formats: readonly LogFormat[], text: string): SessionEvent[] {
  const events: SessionEvent[] = [];
  const tallies = formats.flatMap((f) => f.usage ? [f.usage()] : []);
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const at = { line: i + 1, raw: lines[i] };
    const t = at.raw.trim();
    let row: Json | undefined;
    if (t.startsWith("{")) {
      try {
        row = obj(JSON.parse(t));
      } catch { /* a line that only looks like JSON: plain text */ }
    }
    if (!row) {
      events.push(limitEvent(formats, at) ?? { kind: "text", ...at });
      for (const tally of tallies) tally.text?.(at);
      continue;
    }
    for (const tally of tallies) tally.row?.(row, at);
    events.push(...rowEvents(formats, row, at));
  }
  for (const tally of tallies) {
    const usage = tally.end();
    if (usage) {
      events.push(usage);
      break;
    }
  }
  return events;
}
