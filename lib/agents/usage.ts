/**
 * Parsers that read what an agent session spent from the CLI's own structured output. Pure: they
 * take log text and return a `UsageReport`, or undefined when the log names no usage.
 */
import { estimateMicroUsd, type TokenCounts, usdToMicro } from "../cost/prices.ts";
import type { ModelUsage, UsageReport } from "../cost/report.ts";

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

function estimated(model: string, tokens: TokenCounts): UsageReport {
  const microUsd = estimateMicroUsd(model, tokens);
  return {
    microUsd,
    byModel: { [model]: modelUsage(tokens, microUsd) },
    source: "estimated",
  };
}

/** A `ModelUsage`, with `cachedInputTokens` only when some input was cached. */
function modelUsage(tokens: TokenCounts, microUsd: number): ModelUsage {
  const usage: ModelUsage = {
    inputTokens: tokens.inputTokens,
    outputTokens: tokens.outputTokens,
    microUsd,
  };
  if (tokens.cachedInputTokens) usage.cachedInputTokens = tokens.cachedInputTokens;
  return usage;
}

/** Per-model token counts summed into an estimated report (models with no tokens dropped). */
function estimatedByModel(counts: Map<string, TokenCounts>): UsageReport | undefined {
  const byModel: Record<string, ModelUsage> = {};
  let microUsd = 0;
  for (const [model, tokens] of counts) {
    if (tokens.inputTokens + tokens.outputTokens === 0) continue;
    const cost = estimateMicroUsd(model, tokens);
    byModel[model] = modelUsage(tokens, cost);
    microUsd += cost;
  }
  if (Object.keys(byModel).length === 0) return undefined;
  return { microUsd, byModel, source: "estimated" };
}

function addTokens(counts: Map<string, TokenCounts>, model: string, t: TokenCounts): void {
  const c = counts.get(model) ?? { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 };
  c.inputTokens += t.inputTokens;
  c.cachedInputTokens = (c.cachedInputTokens ?? 0) + (t.cachedInputTokens ?? 0);
  c.outputTokens += t.outputTokens;
  counts.set(model, c);
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
  return estimated(initModel(lines) ?? fallbackModel, {
    inputTokens: num(u.input_tokens) + num(u.cache_read_input_tokens) +
      num(u.cache_creation_input_tokens),
    cachedInputTokens: num(u.cache_read_input_tokens),
    outputTokens: num(u.output_tokens),
  });
}

/** `turn.completed` / Responses API usage: `input_tokens` includes `cached_input_tokens`. */
function codexTokens(u: Json): TokenCounts {
  return {
    inputTokens: num(u.input_tokens),
    cachedInputTokens: num(u.cached_input_tokens),
    outputTokens: num(u.output_tokens),
  };
}

/** The thread id of a Codex `exec --json` log (its `thread.started` event), if any. */
export function codexThreadId(text: string): string | undefined {
  const started = jsonLines(text).find((l) => l.type === "thread.started");
  return typeof started?.thread_id === "string" ? started.thread_id : undefined;
}

/**
 * Per-model usage from a Codex session record (`$CODEX_HOME/sessions/…/rollout-…-<thread>.jsonl`,
 * which Codex writes for every `exec`): each `token_usage_record` (one per model response) is
 * attributed to the model of its turn's `turn_context`. Without such records, the
 * `token_count` events' `last_token_usage` are used. Undefined when the record names no usage.
 */
function parseCodexSessionRecord(text: string): UsageReport | undefined {
  const turnModel = new Map<string, string>();
  let current = "unknown";
  const records: { turn?: string; usage: Json; model: string }[] = [];
  const counts: { model: string; usage: Json }[] = [];
  for (const line of jsonLines(text)) {
    const payload = obj(line.payload) ?? {};
    if (line.type === "turn_context" && typeof payload.model === "string") {
      current = payload.model;
      if (typeof payload.turn_id === "string") turnModel.set(payload.turn_id, current);
    } else if (line.type === "token_usage_record" && obj(payload.usage)) {
      const turn = typeof payload.turn_id === "string" ? payload.turn_id : undefined;
      records.push({ turn, usage: obj(payload.usage)!, model: current });
    } else if (payload.type === "token_count") {
      const last = obj(obj(payload.info)?.last_token_usage);
      if (last) counts.push({ model: current, usage: last });
    }
  }
  const tokens = new Map<string, TokenCounts>();
  if (records.length > 0) {
    for (const r of records) {
      addTokens(tokens, (r.turn && turnModel.get(r.turn)) ?? r.model, codexTokens(r.usage));
    }
  } else {
    for (const c of counts) addTokens(tokens, c.model, codexTokens(c.usage));
  }
  return estimatedByModel(tokens);
}

/** Options of {@link parseCodexJson}. */
export interface CodexUsageOptions {
  /** The model to price the log's tokens at when no session record is given. */
  model?: string;
  /** Text of the session record Codex wrote for this run (see {@link parseCodexSessionRecord}). */
  sessionRecord?: string;
}

/**
 * Codex `exec --json`: Codex prints no cost and no model, only `{"type":"turn.completed","usage":
 * {input_tokens, cached_input_tokens, output_tokens, …}}` per turn. The model Codex actually used
 * is in its session record: when that is given and names usage, it is the source; otherwise the
 * log's turns are summed and priced for `options.model` (`unknown`, at the expensive default
 * price, when nothing better is known). Cached input is priced at the cached-input price.
 */
export function parseCodexJson(
  text: string,
  options: CodexUsageOptions = {},
): UsageReport | undefined {
  if (options.sessionRecord) {
    const fromRecord = parseCodexSessionRecord(options.sessionRecord);
    if (fromRecord) return fromRecord;
  }
  const tokens = new Map<string, TokenCounts>();
  let seen = false;
  for (const l of jsonLines(text)) {
    const u = l.type === "turn.completed" ? obj(l.usage) : undefined;
    if (!u) continue;
    seen = true;
    addTokens(tokens, options.model ?? "unknown", codexTokens(u));
  }
  if (!seen) return undefined;
  return estimatedByModel(tokens) ??
    estimated(options.model ?? "unknown", { inputTokens: 0, outputTokens: 0 });
}

/**
 * Gemini CLI: `--output-format stream-json` ends with `{"type":"result","stats":{"models":
 * {<model>: {total_tokens, input_tokens, output_tokens, cached, input}}}}` (0.61: `input_tokens`
 * includes the `cached` ones, `input` is the uncached part, `output_tokens` excludes thinking);
 * `--output-format json` prints one object with `stats.models.<model>.tokens.{prompt,
 * candidates, cached, thoughts, total}`. Gemini reports no cost: estimated, with thinking tokens
 * billed as output (as Google bills them) and cached input at the cached price. The models are
 * the ones Gemini actually called (its `auto` routing resolves to real model names here).
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
  const counts = new Map<string, TokenCounts>();
  for (const [model, raw] of Object.entries(models)) {
    const m = obj(raw) ?? {};
    const t = obj(m.tokens);
    const input = t ? num(t.prompt) : num(m.input_tokens);
    const total = t ? num(t.total) : num(m.total_tokens);
    const visible = t ? num(t.candidates) + num(t.thoughts) : num(m.output_tokens);
    addTokens(counts, model, {
      inputTokens: input,
      cachedInputTokens: t ? num(t.cached) : num(m.cached),
      outputTokens: Math.max(visible, total - input),
    });
  }
  return estimatedByModel(counts) ?? { microUsd: 0, byModel: {}, source: "estimated" };
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
    return input + output > 0
      ? estimated(model, { inputTokens: input, outputTokens: output })
      : undefined;
  }
  const microUsd = usdToMicro(sessionUsd);
  return {
    microUsd,
    byModel: { [model]: { inputTokens: input, outputTokens: output, microUsd } },
    source: "reported",
  };
}
