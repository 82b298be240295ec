/**
 * Codex CLI's `exec --json` (JSONL, read from codex-cli 0.169):
 *
 * - `{"type":"thread.started","thread_id"}` starts the session (the thread id names Codex's own
 *   record of it); `turn.started` / `turn.completed` mark turns, `turn.failed` and `error` lines
 *   are errors;
 * - `item.*` events: `agent_message` and `reasoning` are the model's words; `command_execution`,
 *   `file_change`, `mcp_tool_call`, `web_search` and `todo_list` are tool traffic, and a completed
 *   `command_execution` carries the command's output (`aggregated_output`); older releases print
 *   `{"msg":{"type":"exec_command_end", …}}` instead;
 * - limits, as 0.169 prints them in `error` / `turn.failed` messages (with a typographic
 *   apostrophe): "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro),
 *   visit https://chatgpt.com/settings/usage to purchase more credits or try again at 12:26 PM."
 *   (local time, from the answer's `resets_at`; "Nov 26th, 2026 3:42 PM" when not today; "try
 *   again later" without `resets_at`), and for any other 429 only "exceeded retry limit, last
 *   status: 429 Too Many Requests" (tests/fixtures/usage_limits/);
 * - Codex prints no cost and no model: each `turn.completed` has `usage` (`input_tokens`, which
 *   includes `cached_input_tokens`, and `output_tokens`), summed for the model `unknown` unless
 *   Codex's session record (`$CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl`) names the models.
 */
import type { TokenCounts } from "../../cost/prices.ts";
import { resetNamedIn } from "../reset_forms.ts";
import type { ResetTime } from "../reset_time.ts";
import type { ModelTokens, SessionEvent, UsageEvent } from "../session_events.ts";
import {
  type Json,
  jsonRows,
  type LogFormat,
  num,
  obj,
  parseLogWith,
  str,
  type Where,
} from "./_log.ts";

const TOOL_ITEMS = new Set([
  "command_execution",
  "file_change",
  "mcp_tool_call",
  "web_search",
  "todo_list",
]);
const PROSE_ITEMS = new Set(["agent_message", "reasoning"]);

/** `turn.completed` / Responses API usage: `input_tokens` includes `cached_input_tokens`. */
function codexTokens(u: Json): TokenCounts {
  return {
    inputTokens: num(u.input_tokens),
    cachedInputTokens: num(u.cached_input_tokens),
    outputTokens: num(u.output_tokens),
  };
}

function addTokens(counts: Record<string, ModelTokens>, model: string, t: TokenCounts): void {
  const c = counts[model] ??= { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  c.inputTokens += t.inputTokens;
  c.cachedInputTokens = (c.cachedInputTokens ?? 0) + (t.cachedInputTokens ?? 0);
  c.outputTokens += t.outputTokens;
}

const CODEX_LIMIT =
  /You[’']ve hit your usage limit|Rate limit reached for|rate_limit_exceeded|usage_limit_reached/i;

/** A line holding Codex's (or the OpenAI API's) limit message, with the reset it names. */
function codexLimit(line: string): { rule: string; reset: ResetTime } | undefined {
  if (!CODEX_LIMIT.test(line)) return undefined;
  const reset = resetNamedIn(line);
  return reset && { rule: "codex:usage_limit", reset };
}

/** Codex's `exec --json` events. */
export const codexFormat: LogFormat = {
  tools(row, at) {
    const item = obj(row.item);
    const type = String(row.type ?? "");
    if (type.startsWith("item.") && item && TOOL_ITEMS.has(String(item.type))) {
      return [
        type === "item.completed" && item.type === "command_execution"
          ? {
            kind: "tool_output",
            ...at,
            id: str(item.id),
            text: str(item.aggregated_output) ?? "",
            source: "codex_command",
          }
          : { kind: "tool_call", ...at, id: str(item.id), name: str(item.type) },
      ];
    }
    const msg = obj(row.msg);
    if (msg?.type !== "exec_command_end") return undefined;
    const text = str(msg.aggregated_output) ?? [str(msg.stdout) ?? "", str(msg.stderr) ?? ""]
      .join("\n");
    return [{ kind: "tool_output", ...at, id: str(msg.call_id), text, source: "codex_command" }];
  },
  session(row, at) {
    return row.type === "thread.started"
      ? { kind: "session", ...at, id: str(row.thread_id) }
      : undefined;
  },
  limit: codexLimit,
  quiet(row) {
    const item = obj(row.item);
    return row.type === "turn.started" || row.type === "turn.completed" ||
      (String(row.type ?? "").startsWith("item.") && item !== undefined &&
        PROSE_ITEMS.has(String(item.type)));
  },
  usage() {
    const models: Record<string, ModelTokens> = {};
    let last: Where | undefined;
    return {
      row(row, at) {
        const u = row.type === "turn.completed" ? obj(row.usage) : undefined;
        if (!u) return;
        addTokens(models, "unknown", codexTokens(u));
        last = at;
      },
      end: () => last && { kind: "usage", ...last, models },
    };
  },
};

const CODEX = [codexFormat];

/** The events of a Codex `exec --json` log. */
export function parseCodexLog(logText: string): SessionEvent[] {
  return parseLogWith(CODEX, logText);
}

/**
 * The usage of a Codex session record: each `token_usage_record` (one per model response) is
 * attributed to the model of its turn's `turn_context`; without such records, the `token_count`
 * events' `last_token_usage` are used. Undefined when the record names no usage.
 */
export function parseCodexSessionRecord(text: string): UsageEvent | undefined {
  const turnModel = new Map<string, string>();
  let current = "unknown";
  const records: { turn?: string; usage: Json; model: string }[] = [];
  const counts: { model: string; usage: Json }[] = [];
  for (const line of jsonRows(text)) {
    const payload = obj(line.payload) ?? {};
    if (line.type === "turn_context" && typeof payload.model === "string") {
      current = payload.model;
      if (typeof payload.turn_id === "string") turnModel.set(payload.turn_id, current);
    } else if (line.type === "token_usage_record" && obj(payload.usage)) {
      records.push({ turn: str(payload.turn_id), usage: obj(payload.usage)!, model: current });
    } else if (payload.type === "token_count") {
      const last = obj(obj(payload.info)?.last_token_usage);
      if (last) counts.push({ model: current, usage: last });
    }
  }
  const models: Record<string, ModelTokens> = {};
  if (records.length > 0) {
    for (const r of records) {
      addTokens(models, (r.turn && turnModel.get(r.turn)) ?? r.model, codexTokens(r.usage));
    }
  } else {
    for (const c of counts) addTokens(models, c.model, codexTokens(c.usage));
  }
  if (Object.keys(models).length === 0) return undefined;
  return { kind: "usage", line: 1, raw: "", models };
}
