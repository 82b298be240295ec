/**
 * Parsers that read what an agent session spent from the CLI's own structured output. Pure: they
 * take log text and return a `UsageReport`, or undefined when the log names no usage.
 */
import type { ModelUsage, UsageReport } from "./adapters/types.ts";
import { estimateMicroUsd, usdToMicro } from "./prices.ts";

type Json = Record<string, unknown>;

function jsonLines(text: string): Json[] {
  const out: Json[] = [];
  for (const line of text.split("\n")) {
    const t = line.trim();
    if (!t.startsWith("{")) continue;
    try {
      const v = JSON.parse(t);
      if (v && typeof v === "object" && !Array.isArray(v)) out.push(v as Json);
    } catch { /* not JSON: plain log text */ }
  }
  return out;
}

function num(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) ? v : 0;
}

function obj(v: unknown): Json | undefined {
  return v && typeof v === "object" && !Array.isArray(v) ? v as Json : undefined;
}

function estimated(model: string, inputTokens: number, outputTokens: number): UsageReport {
  const microUsd = estimateMicroUsd(model, inputTokens, outputTokens);
  return {
    microUsd,
    byModel: { [model]: { inputTokens, outputTokens, microUsd } },
    source: "estimated",
  };
}

/** The model named by a stream-json `system`/`init` line, if any. */
function initModel(lines: Json[]): string | undefined {
  for (const l of lines) {
    if ((l.type === "system" || l.type === "init") && typeof l.model === "string") return l.model;
  }
  return undefined;
}

/**
 * Claude Code (and Qwen Code, which copies the format) `--output-format stream-json`: the last
 * `{"type":"result"}` line carries `total_cost_usd`, `usage` and `modelUsage`
 * (`{<model>: {inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens, costUSD}}`).
 * Input tokens count cache reads and writes too. Without `total_cost_usd` (Qwen) the cost is
 * estimated from `usage` and the model of the `system` init line.
 */
export function parseClaudeStreamJson(
  text: string,
  fallbackModel = "unknown",
): UsageReport | undefined {
  const lines = jsonLines(text);
  const result = lines.findLast((l) => l.type === "result");
  if (!result) return undefined;
  const modelUsage = obj(result.modelUsage);
  if (typeof result.total_cost_usd === "number") {
    const byModel: Record<string, ModelUsage> = {};
    for (const [model, raw] of Object.entries(modelUsage ?? {})) {
      const m = obj(raw) ?? {};
      byModel[model] = {
        inputTokens: num(m.inputTokens) + num(m.cacheReadInputTokens) +
          num(m.cacheCreationInputTokens),
        outputTokens: num(m.outputTokens),
        microUsd: usdToMicro(num(m.costUSD)),
      };
    }
    const microUsd = usdToMicro(result.total_cost_usd);
    if (Object.keys(byModel).length === 0) {
      const u = obj(result.usage) ?? {};
      byModel[initModel(lines) ?? fallbackModel] = {
        inputTokens: num(u.input_tokens) + num(u.cache_read_input_tokens) +
          num(u.cache_creation_input_tokens),
        outputTokens: num(u.output_tokens),
        microUsd,
      };
    }
    return { microUsd, byModel, source: "reported" };
  }
  const u = obj(result.usage);
  if (!u) return undefined;
  return estimated(
    initModel(lines) ?? fallbackModel,
    num(u.input_tokens) + num(u.cache_read_input_tokens) + num(u.cache_creation_input_tokens),
    num(u.output_tokens),
  );
}

/**
 * Codex `exec --json`: every `{"type":"turn.completed","usage":{input_tokens, cached_input_tokens,
 * output_tokens}}` event is summed (`input_tokens` already includes the cached ones). Codex
 * reports no cost and no model in these events, so the cost is estimated for `model` (the
 * configured model, else the adapter's assumed default).
 */
export function parseCodexJson(text: string, model: string): UsageReport | undefined {
  let seen = false;
  let input = 0;
  let output = 0;
  for (const l of jsonLines(text)) {
    if (l.type !== "turn.completed") continue;
    const u = obj(l.usage);
    if (!u) continue;
    seen = true;
    input += num(u.input_tokens);
    output += num(u.output_tokens);
  }
  return seen ? estimated(model, input, output) : undefined;
}

/**
 * Gemini CLI: `--output-format stream-json` ends with `{"type":"result","stats":{"models":
 * {<model>: {input_tokens, output_tokens}}}}`; `--output-format json` prints one object with
 * `stats.models.<model>.tokens.{prompt,candidates}`. Gemini reports no cost: estimated.
 */
export function parseGeminiJson(text: string): UsageReport | undefined {
  const lines = jsonLines(text);
  let candidate = lines.findLast((l) => l.type === "result" && obj(l.stats));
  if (!candidate) {
    const whole = text.trim();
    if (whole.startsWith("{")) {
      try {
        candidate = JSON.parse(whole);
      } catch { /* not one JSON document */ }
    }
  }
  const models = obj(obj(candidate?.stats)?.models);
  if (!models) return undefined;
  const byModel: Record<string, ModelUsage> = {};
  let microUsd = 0;
  for (const [model, raw] of Object.entries(models)) {
    const m = obj(raw) ?? {};
    const tokens = obj(m.tokens);
    const inputTokens = tokens ? num(tokens.prompt) : num(m.input_tokens);
    const outputTokens = tokens ? num(tokens.candidates) : num(m.output_tokens);
    const cost = estimateMicroUsd(model, inputTokens, outputTokens);
    byModel[model] = { inputTokens, outputTokens, microUsd: cost };
    microUsd += cost;
  }
  return { microUsd, byModel, source: "estimated" };
}

function tokenCount(s: string): number {
  const m = /^([\d.]+)([kKmM]?)$/.exec(s.replaceAll(",", ""));
  if (!m) return 0;
  const scale = m[2] === "" ? 1 : m[2].toLowerCase() === "k" ? 1_000 : 1_000_000;
  return Math.round(Number(m[1]) * scale);
}

/**
 * Aider's plain-text report after each message:
 * `Tokens: 2.3k sent, 120 received. Cost: $0.0076 message, $0.01 session.` The last session cost
 * is the total; tokens are summed over messages; the model is read from `Model: <name> …` or
 * `Main model: <name> …`.
 */
export function parseAiderText(text: string, fallbackModel = "unknown"): UsageReport | undefined {
  let input = 0;
  let output = 0;
  let sessionUsd: number | undefined;
  let model = fallbackModel;
  for (const line of text.split("\n")) {
    const mm = /^(?:Main )?[Mm]odel: (\S+)/.exec(line.trim());
    if (mm) model = mm[1];
    const t =
      /Tokens: ([\d.,]+[kKmM]?) sent(?:, ([\d.,]+[kKmM]?) cache \w+)*, ([\d.,]+[kKmM]?) received/
        .exec(line);
    if (t) {
      input += tokenCount(t[1]);
      output += tokenCount(t[3]);
    }
    const c = /Cost: \$([\d.]+) message, \$([\d.]+) session/.exec(line);
    if (c) sessionUsd = Number(c[2]);
  }
  if (sessionUsd === undefined) {
    return input + output > 0 ? estimated(model, input, output) : undefined;
  }
  const microUsd = usdToMicro(sessionUsd);
  return {
    microUsd,
    byModel: { [model]: { inputTokens: input, outputTokens: output, microUsd } },
    source: "reported",
  };
}
