/**
 * Which batch API an adapter's provider has, where it is and how to call it (pure, DESIGN.md
 * §15): `claude` → Anthropic Message Batches, `codex` → OpenAI Batch. The base URL is
 * `batch.api_url`, else the adapter's endpoint variable (`ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`),
 * else the provider's default; the key is the adapter's own variable. Anthropic's base has no
 * `/v1` (as `ANTHROPIC_BASE_URL`), OpenAI's ends in `/v1` (as `OPENAI_BASE_URL`).
 */

/** A provider with a batch API. */
export type BatchProvider = "anthropic" | "openai";

/** The batch API of the adapter named `adapter`, if its provider has one. */
export function batchProviderOf(adapter: string): BatchProvider | undefined {
  return adapter === "claude" ? "anthropic" : adapter === "codex" ? "openai" : undefined;
}

/**
 * How batch routing is had with the adapter named `adapter`, in the words of the budget stop
 * (spec §7.3 "use batch routing"): its provider's batch API at half the price, or the adapters
 * whose providers have one.
 */
export function batchRoutingHint(adapter: string): string {
  const provider = batchProviderOf(adapter);
  return provider
    ? `batch routing (batch_eligible: true sends ${adapter} tasks to ${
      provider === "anthropic" ? "Anthropic's Message Batches API" : "OpenAI's Batch API"
    } at half the price)`
    : "batch routing (batch_eligible: true, with the claude or codex adapter, whose providers' " +
      "batch APIs cost half)";
}

/** Where and how to call a batch API. */
export interface BatchEndpoint {
  provider: BatchProvider;
  /** Without a trailing slash. */
  baseUrl: string;
  /** Authentication and version headers (values never logged). */
  headers: Record<string, string>;
}

/** Why a provider's batch API cannot be called, with the fix. */
export interface BatchEndpointProblem {
  problem: string;
  fix: string;
}

const DEFAULT_BASE: Record<BatchProvider, string> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com/v1",
};

/** The Anthropic API version the Message Batches requests name. */
const ANTHROPIC_VERSION = "2023-06-01";

/** The endpoint of `provider` under `env`, or why there is none. */
export function batchEndpoint(
  provider: BatchProvider,
  env: Readonly<Record<string, string | undefined>>,
  apiUrl?: string,
): BatchEndpoint | BatchEndpointProblem {
  const set = (name: string) => (env[name] ?? "") !== "";
  if (provider === "anthropic") {
    const baseUrl = (apiUrl || env.ANTHROPIC_BASE_URL || DEFAULT_BASE.anthropic).replace(
      /\/+$/,
      "",
    );
    const version = { "anthropic-version": ANTHROPIC_VERSION };
    if (set("ANTHROPIC_API_KEY")) {
      return { provider, baseUrl, headers: { ...version, "x-api-key": env.ANTHROPIC_API_KEY! } };
    }
    if (set("ANTHROPIC_AUTH_TOKEN")) {
      return {
        provider,
        baseUrl,
        headers: { ...version, authorization: `Bearer ${env.ANTHROPIC_AUTH_TOKEN}` },
      };
    }
    return {
      problem: "the Message Batches API needs ANTHROPIC_API_KEY (a Claude subscription's " +
        "CLAUDE_CODE_OAUTH_TOKEN cannot call it)",
      fix: "export ANTHROPIC_API_KEY=… (or ANTHROPIC_AUTH_TOKEN for a gateway), or leave " +
        "batch_eligible off",
    };
  }
  const baseUrl = (apiUrl || env.OPENAI_BASE_URL || DEFAULT_BASE.openai).replace(/\/+$/, "");
  const key = set("OPENAI_API_KEY")
    ? env.OPENAI_API_KEY
    : set("CODEX_API_KEY")
    ? env.CODEX_API_KEY
    : "";
  if (!key) {
    return {
      problem: "the OpenAI Batch API needs OPENAI_API_KEY (or CODEX_API_KEY)",
      fix: "export OPENAI_API_KEY=…, or leave batch_eligible off",
    };
  }
  return { provider, baseUrl, headers: { authorization: `Bearer ${key}` } };
}

/** Claude Code's model aliases as the Messages API names the models (Claude Code 2.1.197). */
const CLAUDE_ALIASES: Record<string, string> = {
  sonnet: "claude-sonnet-5",
  opus: "claude-opus-4-8",
  haiku: "claude-haiku-4-5",
};

/** The model a batch request asks for when the configuration names none. */
const DEFAULT_BATCH_MODEL: Record<BatchProvider, string> = {
  anthropic: CLAUDE_ALIASES.sonnet,
  openai: "gpt-6-sol",
};

/** The API model id for `model` (`model`, the role's, or `complexity: low` routing). */
export function batchModel(provider: BatchProvider, model?: string): string {
  if (!model) return DEFAULT_BATCH_MODEL[provider];
  if (provider === "anthropic") return CLAUDE_ALIASES[model.replace(/\[1m\]$/, "")] ?? model;
  return model;
}
