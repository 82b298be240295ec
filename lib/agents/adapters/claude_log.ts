/**
 * Claude Code's `--output-format stream-json` (Qwen Code prints the same format, without a cost):
 *
 * - `{"type":"system","subtype":"init","model","session_id"}` starts the session;
 * - `assistant` / `user` lines hold the model's words, or `tool_use` / `tool_result` content
 *   blocks (the tool's output is the `tool_result` block's `content`, a string or text blocks);
 *   an `assistant` line of the `<synthetic>` model is the CLI speaking, not the model;
 * - throttling: a `rate_limit_event` whose status is `rejected` (its `rate_limit_info.resetsAt`,
 *   epoch seconds, is when the limit resets), an Anthropic
 *   `{"type":"error","error":{"type":"rate_limit_error"}}`, `"error":"rate_limit"`,
 *   `"api_error_status":429`;
 * - a subscription's limit, as 2.1.197 prints it (a `<synthetic>` assistant message and an error
 *   `result`): "You've hit your session limit · resets 3pm (America/New_York)" (also weekly,
 *   Opus, Sonnet, usage limit; "Dec 5, 3pm" when not today); older releases printed "Claude AI
 *   usage limit reached|<epoch seconds>" and "5-hour limit reached ∙ resets 3pm";
 * - the last `{"type":"result"}` line carries `total_cost_usd`, `usage` and `modelUsage`
 *   (`{<model>: {inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens,
 *   costUSD}}`). Input tokens count cache reads and writes too. Without `total_cost_usd` (Qwen)
 *   the tokens of `usage` are priced for the model of the init line.
 */
import type { ResetTime } from "../reset_time.ts";
import type {
  ModelTokens,
  SessionEvent,
  ToolCallEvent,
  ToolOutputEvent,
  UsageEvent,
} from "../session_events.ts";
import { resetNamedIn } from "../reset_forms.ts";
import {
  contentText,
  isToolType,
  type Json,
  type LogFormat,
  num,
  obj,
  parseLogWith,
  str,
  type UsageTally,
  type Where,
} from "./_log.ts";

function toolBlocks(row: Json, at: Where): (ToolCallEvent | ToolOutputEvent)[] | undefined {
  const content = obj(row.message)?.content;
  if (!Array.isArray(content)) return undefined;
  const blocks = content.map(obj).filter((b) => b !== undefined && isToolType(b.type));
  if (blocks.length === 0) return undefined;
  return blocks.map((b): ToolCallEvent | ToolOutputEvent =>
    b!.type === "tool_result"
      ? {
        kind: "tool_output",
        ...at,
        id: str(b!.tool_use_id),
        text: contentText(b!.content),
        source: "claude_tool_result",
      }
      : { kind: "tool_call", ...at, id: str(b!.id), name: str(b!.name) }
  );
}

/**
 * What a session ended before its `result` line (Ctrl-C, a timeout, a kill) spent: the usage its
 * assistant messages stated, per model, input counting cache reads and writes. Their output
 * count is the one the stream started with, so this is a lower bound; undefined without any.
 */
function messagesUsage(
  messages: { model?: string; usage: Json; at: Where }[],
  fallbackModel: string,
): UsageEvent | undefined {
  const last = messages.at(-1);
  if (!last) return undefined;
  const models: Record<string, ModelTokens> = {};
  for (const { model, usage: u } of messages) {
    const t = models[model ?? fallbackModel] ??= { inputTokens: 0, outputTokens: 0 };
    t.inputTokens += num(u.input_tokens) + num(u.cache_read_input_tokens) +
      num(u.cache_creation_input_tokens);
    t.outputTokens += num(u.output_tokens);
    const cached = num(u.cache_read_input_tokens);
    if (cached) t.cachedInputTokens = (t.cachedInputTokens ?? 0) + cached;
  }
  return { kind: "usage", ...last.at, models };
}

function usageTally(fallbackModel: string): UsageTally {
  let initModel: string | undefined;
  let result: { row: Json; at: Where } | undefined;
  // Each assistant message's usage (a message of several content blocks repeats it on each line).
  const messages = new Map<string, { model?: string; usage: Json; at: Where }>();
  return {
    row(row, at) {
      if (initModel === undefined && (row.type === "system" || row.type === "init")) {
        initModel = str(row.model);
      }
      if (row.type === "result") result = { row, at };
      const message = row.type === "assistant" ? obj(row.message) : undefined;
      const usage = obj(message?.usage);
      if (message && usage && message.model !== "<synthetic>") {
        messages.set(str(message.id) ?? `line ${at.line}`, {
          model: str(message.model),
          usage,
          at,
        });
      }
    },
    end() {
      if (!result) return messagesUsage([...messages.values()], initModel ?? fallbackModel);
      const { row, at } = result;
      const model = initModel ?? fallbackModel;
      const u = obj(row.usage);
      const tokens = u && {
        inputTokens: num(u.input_tokens) + num(u.cache_read_input_tokens) +
          num(u.cache_creation_input_tokens),
        outputTokens: num(u.output_tokens),
      };
      if (typeof row.total_cost_usd === "number") {
        const models: Record<string, ModelTokens> = Object.fromEntries(
          Object.entries(obj(row.modelUsage) ?? {}).map(([name, raw]) => {
            const m = obj(raw) ?? {};
            return [name, {
              inputTokens: num(m.inputTokens) + num(m.cacheReadInputTokens) +
                num(m.cacheCreationInputTokens),
              outputTokens: num(m.outputTokens),
              costUsd: num(m.costUSD),
            }];
          }),
        );
        if (Object.keys(models).length === 0) {
          models[model] = tokens ?? { inputTokens: 0, outputTokens: 0 };
        }
        return { kind: "usage", ...at, models, costUsd: row.total_cost_usd };
      }
      if (!tokens) return undefined;
      const cached = num(u!.cache_read_input_tokens);
      return {
        kind: "usage",
        ...at,
        models: { [model]: { ...tokens, ...(cached ? { cachedInputTokens: cached } : {}) } },
      };
    },
  };
}

/** Claude Code's limit messages (never "Context limit reached", which is the context window). */
const CLAUDE_LIMIT =
  /You[’']ve (?:hit|reached) your (?:[\w'’-]+ ){0,3}limit|\b(?:usage|\d+-hour|session|weekly|Opus|Sonnet) limit reached/i;

/** A line holding Claude Code's limit message, with the reset it names. */
function claudeLimit(line: string): { rule: string; reset: ResetTime } | undefined {
  if (!CLAUDE_LIMIT.test(line)) return undefined;
  const reset = resetNamedIn(line);
  return reset && { rule: "claude:usage_limit", reset };
}

/**
 * What a failed `result` says (its `result` text: "API Error: 500 Internal server error. …") and
 * what an `api_retry` line says ("API retry 3/10: 500 server_error").
 */
function claudeErrorMessage(row: Json): string | undefined {
  if (row.type === "result" && row.is_error === true) return str(row.result)?.trim() || undefined;
  if (row.type !== "system" || row.subtype !== "api_retry") return undefined;
  const status = typeof row.error_status === "number" ? `${row.error_status} ` : "no response, ";
  return `API retry ${num(row.attempt)}/${num(row.max_retries)}: ${status}${
    str(row.error) ?? "error"
  }`;
}

/** Claude Code's stream-json; `fallbackModel` prices usage when no init line names the model. */
export function claudeFormat(fallbackModel = "unknown"): LogFormat {
  return {
    tools: toolBlocks,
    signal(row, at) {
      if (row.type === "rate_limit_event") {
        const info = obj(row.rate_limit_info) ?? row;
        if (info.status !== "rejected") return "quiet";
        const rule = "claude:rate_limit_event_rejected";
        return typeof info.resetsAt === "number"
          ? { kind: "usage_limit", ...at, rule, reset: { kind: "at", epochS: info.resetsAt } }
          : { kind: "rate_limit", ...at, rule };
      }
      if (row.type === "error" && obj(row.error)?.type === "rate_limit_error") {
        return { kind: "rate_limit", ...at, rule: "anthropic:rate_limit_error" };
      }
      if (row.error === "rate_limit") {
        return { kind: "rate_limit", ...at, rule: "claude:error_rate_limit" };
      }
      if (row.api_error_status === 429) {
        return { kind: "rate_limit", ...at, rule: "claude:api_error_status_429" };
      }
      return undefined;
    },
    session(row, at) {
      if (row.type !== "system" || row.subtype !== "init") return undefined;
      return { kind: "session", ...at, id: str(row.session_id), model: str(row.model) };
    },
    quiet(row) {
      const synthetic = obj(row.message)?.model === "<synthetic>";
      return ((row.type === "assistant" || row.type === "user") && !synthetic) ||
        (row.type === "result" && row.is_error === false) || row.type === "system";
    },
    limit: claudeLimit,
    errorMessage: claudeErrorMessage,
    usage: () => usageTally(fallbackModel),
  };
}

const CLAUDE = [claudeFormat()];

/** The events of a Claude Code stream-json log. */
export function parseClaudeLog(logText: string): SessionEvent[] {
  return parseLogWith(CLAUDE, logText);
}
