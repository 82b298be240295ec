/**
 * Records what the real agent CLIs print when their provider answers a usage or rate limit:
 * each case starts the provider's stand-in (tests/fakes/) answering one limit in its wire format
 * (tests/fakes/limits.ts), runs the installed CLI with the adapter's argv and headless set-up and
 * the agent's allow-listed environment, its stdout and stderr going to one log as the service
 * writes them, and stores the log under tests/fixtures/usage_limits/ with a manifest entry: the
 * CLI's version, what the provider said, when the output was printed, and what the service must
 * park the adapter until. lib/agents/usage_limit_fixtures_test.ts reads them.
 *
 *   deno run -A tests/_capture_limits.ts            # every case (about 2 minutes)
 *   deno run -A tests/_capture_limits.ts codex      # the cases whose name starts so
 */
import { join } from "node:path";
import type { AgentAdapter } from "../lib/agents/adapters/types.ts";
import { claudeAdapter } from "../lib/agents/adapters/claude.ts";
import { codexAdapter } from "../lib/agents/adapters/codex.ts";
import { geminiAdapter } from "../lib/agents/adapters/gemini.ts";
import { agentEnvironment } from "../lib/agents/env.ts";
import { prepareHeadless } from "../lib/agents/launch.ts";
import type { FakeServer } from "./fakes/_sse_server.ts";
import { startFakeAnthropicApi } from "./fakes/anthropic_api.ts";
import { startFakeResponsesApi } from "./fakes/openai_responses_api.ts";
import { startFakeGeminiApi } from "./fakes/gemini_api.ts";
import * as limits from "./fakes/limits.ts";

/** Where the fixtures go. */
export const FIXTURES = new URL("./fixtures/usage_limits/", import.meta.url).pathname;

/** What the service must do with a captured log. */
export type Expectation =
  /** Park until this instant (epoch seconds, whole): the reset the log names, rounded up. */
  | { named: true; until: number }
  /** The log names no reset: the 300 s cooldown. */
  | { named: false };

/** One manifest entry. */
export interface CapturedCase {
  name: string;
  file: string;
  adapter: string;
  /** `<cli> --version` of the CLI that printed it. */
  version: string;
  /** How the CLI authenticated (Claude Code words limits differently for a subscription). */
  auth: string;
  /** What the stand-in answered, in words. */
  provider_said: string;
  /** When the CLI had printed it (ms since the epoch): relative resets count from here. */
  captured_at_ms: number;
  /** The local zone of the machine that captured it (the CLIs print local times). */
  zone: string;
  expect: Expectation;
  /** Why the expectation is what it is. */
  note: string;
}

interface Case {
  name: string;
  adapter: AgentAdapter;
  auth: string;
  /** The stand-in, answering with the limit of a reset at `resetS` (epoch seconds). */
  server(resetS: number): FakeServer;
  /** The variables that point the CLI at the stand-in. */
  env(url: string): Record<string, string>;
  provider_said(resetS: number): string;
  expect(resetS: number, printedAtMs: number): Expectation;
  note: string;
  /** End the CLI after this long (as the service ends an agent whose limit it has read). */
  killAfterMs?: number;
}

const anthropicEnv = (auth: Record<string, string>) => (url: string) => ({
  ANTHROPIC_BASE_URL: url,
  ...auth,
  CLAUDE_CODE_MAX_RETRIES: "0",
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_TELEMETRY: "1",
});
const API_KEY = { ANTHROPIC_API_KEY: "test-key" };
const OAUTH = { CLAUDE_CODE_OAUTH_TOKEN: "sk-ant-oat01-test" };
const openaiEnv = (url: string) => ({ OPENAI_API_KEY: "test-key", OPENAI_BASE_URL: `${url}/v1` });
const geminiEnv = (url: string) => ({ GEMINI_API_KEY: "test-key", GOOGLE_GEMINI_BASE_URL: url });

/** A clock printed to the minute covers that minute: the park lasts to its end. */
const minuteEnd = (resetS: number) => Math.floor(resetS / 60) * 60 + 60;
const GEMINI_DELAY_S = 8000.482913;

const CASES: Case[] = [
  {
    name: "claude-usage-limit-epoch-api-key",
    adapter: claudeAdapter,
    auth: "ANTHROPIC_API_KEY",
    server: (r) => startFakeAnthropicApi({ limit: limits.anthropicUsageLimit(r) }),
    env: anthropicEnv(API_KEY),
    provider_said: (r) => `429 rate_limit_error "Claude AI usage limit reached|${r}"`,
    expect: (r) => ({ named: true, until: r }),
    note: 'the epoch in the message, on lines that also say "error":"rate_limit" and 429',
  },
  {
    name: "claude-usage-limit-epoch-oauth",
    adapter: claudeAdapter,
    auth: "CLAUDE_CODE_OAUTH_TOKEN",
    server: (r) => startFakeAnthropicApi({ limit: limits.anthropicUsageLimit(r) }),
    env: anthropicEnv(OAUTH),
    provider_said: (r) => `429 rate_limit_error "Claude AI usage limit reached|${r}"`,
    expect: (r) => ({ named: true, until: r }),
    note: "a rejected rate_limit_event without resetsAt comes first; the message's epoch wins",
  },
  {
    name: "claude-unified-limit-oauth",
    adapter: claudeAdapter,
    auth: "CLAUDE_CODE_OAUTH_TOKEN",
    server: (r) => startFakeAnthropicApi({ limit: limits.anthropicUnifiedLimit(r) }),
    env: anthropicEnv(OAUTH),
    provider_said: (r) => `429, anthropic-ratelimit-unified-status: rejected, -reset: ${r}`,
    expect: (r) => ({ named: true, until: r }),
    note: "the rejected rate_limit_event's resetsAt (its message says the minute: resets h:mm)",
  },
  {
    name: "claude-unified-limit-api-key",
    adapter: claudeAdapter,
    auth: "ANTHROPIC_API_KEY",
    server: (r) => startFakeAnthropicApi({ limit: limits.anthropicUnifiedLimit(r) }),
    env: anthropicEnv(API_KEY),
    provider_said: (r) => `429, anthropic-ratelimit-unified-status: rejected, -reset: ${r}`,
    expect: () => ({ named: false }),
    note: "with an API key Claude Code prints the body's message only: no reset is named",
  },
  {
    name: "claude-rate-limit-headers-api-key",
    adapter: claudeAdapter,
    auth: "ANTHROPIC_API_KEY",
    server: (r) => startFakeAnthropicApi({ limit: limits.anthropicRateLimit(37, r) }),
    env: anthropicEnv(API_KEY),
    provider_said: (r) =>
      `429, retry-after: 37, anthropic-ratelimit-{requests,tokens}-reset: ${
        new Date(r * 1000).toISOString()
      }`,
    expect: () => ({ named: false }),
    note: "Claude Code prints no header: the log names no reset",
  },
  {
    name: "codex-usage-limit-resets-at",
    adapter: codexAdapter,
    auth: "OPENAI_API_KEY",
    server: (r) =>
      startFakeResponsesApi({ limit: limits.openaiUsageLimit({ atEpochS: r, inSeconds: 8000 }) }),
    env: openaiEnv,
    provider_said: (r) => `429 usage_limit_reached, resets_at: ${r}, resets_in_seconds: 8000`,
    expect: (r) => ({ named: true, until: minuteEnd(r) }),
    note: '"try again at h:mm AM/PM" (local time, to the minute): the end of that minute',
  },
  {
    name: "codex-usage-limit-resets-in-seconds",
    adapter: codexAdapter,
    auth: "OPENAI_API_KEY",
    server: () => startFakeResponsesApi({ limit: limits.openaiUsageLimit({ inSeconds: 8000 }) }),
    env: openaiEnv,
    provider_said: () => "429 usage_limit_reached, resets_in_seconds: 8000 (no resets_at)",
    expect: () => ({ named: false }),
    note: 'Codex 0.169 reads resets_at only and prints "try again later"',
  },
  {
    name: "codex-rate-limit-try-again-in",
    adapter: codexAdapter,
    auth: "OPENAI_API_KEY",
    server: () => startFakeResponsesApi({ limit: limits.openaiRateLimit("20s", "2h13m0s") }),
    env: openaiEnv,
    provider_said: () =>
      '429 rate_limit_exceeded "Please try again in 20s.", x-ratelimit-reset-requests: 2h13m0s',
    expect: () => ({ named: false }),
    note: 'Codex prints "exceeded retry limit, last status: 429 Too Many Requests" only',
  },
  {
    name: "gemini-quota-retry-delay",
    adapter: geminiAdapter,
    auth: "GEMINI_API_KEY",
    server: () =>
      startFakeGeminiApi({
        limit: limits.googleQuota("GenerateRequestsPerHourPerProjectPerModel", GEMINI_DELAY_S),
      }),
    env: geminiEnv,
    provider_said: () =>
      `429 RESOURCE_EXHAUSTED, RetryInfo retryDelay ${Math.floor(GEMINI_DELAY_S)}s, ` +
      `"Please retry in ${GEMINI_DELAY_S}s."`,
    expect: (_r, at) => ({ named: true, until: Math.ceil(at / 1000 + GEMINI_DELAY_S) }),
    note: '"Please retry in 8000.482913s." and "Suggested retry after 8000s.": the later, ' +
      "rounded up to the second",
  },
  {
    name: "gemini-quota-per-minute",
    adapter: geminiAdapter,
    auth: "GEMINI_API_KEY",
    server: () =>
      startFakeGeminiApi({
        limit: limits.googleQuota("GenerateRequestsPerMinutePerProjectPerModel", 34.5),
      }),
    env: geminiEnv,
    provider_said: () => '429 RESOURCE_EXHAUSTED, retryDelay 34s, "Please retry in 34.5s."',
    expect: (_r, at) => ({ named: true, until: Math.ceil(at / 1000 + 34.5) }),
    note: "Gemini CLI retries by itself, printing each attempt's error to stderr; the service " +
      "reads the first and ends it (here: after 15 s)",
    killAfterMs: 15_000,
  },
  {
    name: "gemini-quota-daily",
    adapter: geminiAdapter,
    auth: "GEMINI_API_KEY",
    server: () => startFakeGeminiApi({ limit: limits.googleQuota("GenerateRequestsPerDay") }),
    env: geminiEnv,
    provider_said: () => "429 RESOURCE_EXHAUSTED, QuotaFailure quotaId GenerateRequestsPerDay",
    expect: () => ({ named: false }),
    note: '"You have exhausted your daily quota on this model.": no reset is named',
  },
];

async function version(binary: string): Promise<string> {
  const out = await new Deno.Command(binary, { args: ["--version"], stdout: "piped" }).output();
  return new TextDecoder().decode(out.stdout).trim().split("\n")[0];
}

async function capture(c: Case): Promise<CapturedCase> {
  const resetS = Math.floor(Date.now() / 1000) + 2 * 3600 + 13 * 60 + 17;
  await using server = c.server(resetS);
  const home = await Deno.makeTempDir({ prefix: "capture-home-" });
  const work = await Deno.makeTempDir({ prefix: "capture-work-" });
  const runtime = await Deno.makeTempDir({ prefix: "capture-runtime-" });
  try {
    const host = {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: home,
      LANG: "C.UTF-8",
      TMPDIR: runtime,
      CODEX_HOME: home,
      ...c.env(server.url),
    };
    const env = agentEnvironment(c.adapter, host, {
      serverUrl: "http://127.0.0.1:9",
      runId: "capture",
      taskId: "t1",
      sessionId: "s-capture-001",
    });
    const launch = await prepareHeadless(c.adapter, env, runtime);
    const argv = [...launch.args, ...c.adapter.buildArgv({ prompt: "Say done.", workdir: work })];
    const log = join(runtime, "session.log");
    // stdout and stderr into one log, as the service writes an agent's output.
    const child = new Deno.Command("sh", {
      args: ["-c", 'exec "$@" >"$LOG" 2>&1', "sh", c.adapter.binary, ...argv],
      cwd: work,
      clearEnv: true,
      env: { ...launch.env, LOG: log },
      stdin: "null",
      detached: true,
    }).spawn();
    const signal = (name: Deno.Signal) => {
      try {
        Deno.kill(-child.pid, name);
      } catch { /* ended */ }
    };
    const term = setTimeout(() => signal("SIGTERM"), c.killAfterMs ?? 120_000);
    const kill = setTimeout(() => signal("SIGKILL"), (c.killAfterMs ?? 120_000) + 5000);
    await child.status;
    clearTimeout(term);
    clearTimeout(kill);
    const printedAt = Date.now();
    const file = `${c.name}.log`;
    await Deno.copyFile(log, join(FIXTURES, file));
    return {
      name: c.name,
      file,
      adapter: c.adapter.name,
      version: await version(c.adapter.binary),
      auth: c.auth,
      provider_said: c.provider_said(resetS),
      captured_at_ms: printedAt,
      zone: Intl.DateTimeFormat().resolvedOptions().timeZone,
      expect: c.expect(resetS, printedAt),
      note: c.note,
    };
  } finally {
    for (const dir of [home, work, runtime]) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  }
}

if (import.meta.main) {
  await Deno.mkdir(FIXTURES, { recursive: true });
  const manifestPath = join(FIXTURES, "manifest.json");
  let manifest: CapturedCase[] = [];
  try {
    manifest = JSON.parse(await Deno.readTextFile(manifestPath));
  } catch { /* a first capture */ }
  const wanted = CASES.filter((c) => Deno.args.every((a) => c.name.startsWith(a)));
  for (const c of wanted) {
    const captured = await capture(c);
    console.log(`${c.name}: ${captured.version} (${JSON.stringify(captured.expect)})`);
    manifest = [...manifest.filter((m) => m.name !== c.name), captured];
  }
  const order = CASES.map((c) => c.name);
  manifest.sort((a, b) => order.indexOf(a.name) - order.indexOf(b.name));
  await Deno.writeTextFile(manifestPath, JSON.stringify(manifest, null, 2) + "\n");
}
