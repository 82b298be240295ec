/**
 * Gemini CLI's `--output-format stream-json` (read from 0.61):
 *
 * - `{"type":"init","session_id","model"}` starts the session; `message` lines are the model's
 *   words; `tool_use` (`tool_id`, `tool_name`) and `tool_result` (`tool_id`, `output`) lines are
 *   tool traffic; `error` lines and a `result` whose status is `error` are errors (a provider's
 *   error body is wrapped in "[API Error: …]");
 * - quota: Google's 429 bodies ("You exceeded your current quota … Please retry in 34.07s.",
 *   `"retryDelay":"34s"`, RESOURCE_EXHAUSTED), "You have exhausted your daily quota on this
 *   model.", and the CLI's own "Usage limit reached for gemini-2.5-pro. Access resets at 3:42 PM
 *   PST.";
 * - the last `{"type":"result","stats":{"models":{<model>: {total_tokens, input_tokens,
 *   output_tokens, cached, input}}}}` states the usage (`input_tokens` includes the `cached`
 *   ones, `output_tokens` excludes thinking); `--output-format json` prints one object with
 *   `stats.models.<model>.tokens.{prompt, candidates, cached, thoughts, total}` instead. Gemini
 *   prints no cost; thinking tokens are billed as output (as Google bills them). The models are
 *   the ones Gemini actually called (its `auto` routing resolves to real model names here);
 *   models that used no tokens are left out.
 */
import { resetNamedIn } from "../reset_forms.ts";
import type { ResetTime } from "../reset_time.ts";
import type { ModelTokens, SessionEvent } from "../session_events.ts";
import {
  contentText,
  type Json,
  type LogFormat,
  num,
  obj,
  parseLogWith,
  str,
  type UsageTally,
  type Where,
} from "./_log.ts";

function usageTally(): UsageTally {
  let result: { row: Json; at: Where } | undefined;
  const lines: string[] = [];
  return {
    row(row, at) {
      lines.push(at.raw);
      if (row.type === "result" && obj(row.stats)) result = { row, at };
    },
    text(at) {
      lines.push(at.raw);
    },
    end() {
      let stated = result;
      if (!stated) {
        // `--output-format json`: the whole log is one (pretty-printed) document.
        const whole = lines.join("\n").trim();
        if (!whole.startsWith("{")) return undefined;
        let doc: Json | undefined;
        try {
          doc = obj(JSON.parse(whole));
        } catch { /* not one JSON document */ }
        if (!doc) return undefined;
        stated = { row: doc, at: { line: 1, raw: lines[0] } };
      }
      const stats = obj(obj(stated.row.stats)?.models);
      if (!stats) return undefined;
      const models: Record<string, ModelTokens> = {};
      for (const [model, raw] of Object.entries(stats)) {
        const m = obj(raw) ?? {};
        const t = obj(m.tokens);
        const input = t ? num(t.prompt) : num(m.input_tokens);
        const total = t ? num(t.total) : num(m.total_tokens);
        const visible = t ? num(t.candidates) + num(t.thoughts) : num(m.output_tokens);
        const output = Math.max(visible, total - input);
        if (input + output === 0) continue;
        models[model] = {
          inputTokens: input,
          cachedInputTokens: t ? num(t.cached) : num(m.cached),
          outputTokens: output,
        };
      }
      return { kind: "usage", ...stated.at, models };
    },
  };
}

const GEMINI_LIMIT =
  /Usage limit reached for|exhausted your (?:daily )?quota|exceeded your current quota|Quota exceeded|RESOURCE_EXHAUSTED/i;

/** A line holding Gemini CLI's (or Google's) quota message, with the reset it names. */
function geminiLimit(line: string): { rule: string; reset: ResetTime } | undefined {
  if (!GEMINI_LIMIT.test(line)) return undefined;
  const reset = resetNamedIn(line);
  return reset && { rule: "gemini:quota", reset };
}

/** Gemini CLI's stream-json events. */
export const geminiFormat: LogFormat = {
  tools(row, at) {
    if (row.type === "tool_use") {
      return [{ kind: "tool_call", ...at, id: str(row.tool_id), name: str(row.tool_name) }];
    }
    if (row.type !== "tool_result") return undefined;
    const text = str(row.output) ?? contentText(row.content);
    return [{
      kind: "tool_output",
      ...at,
      id: str(row.tool_id),
      text,
      source: "gemini_tool_output",
    }];
  },
  session(row, at) {
    return row.type === "init"
      ? { kind: "session", ...at, id: str(row.session_id), model: str(row.model) }
      : undefined;
  },
  limit: geminiLimit,
  quiet(row) {
    return row.type === "message" || (row.type === "result" && row.status === "success");
  },
  usage: usageTally,
};

const GEMINI = [geminiFormat];

/** The events of a Gemini CLI stream-json (or json) log. */
export function parseGeminiLog(logText: string): SessionEvent[] {
  return parseLogWith(GEMINI, logText);
}
