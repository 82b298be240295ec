/**
 * The REAL Claude Code, Codex and Gemini CLI run by the service while their provider's stand-in
 * answers a usage limit that names its reset, in the provider's wire format
 * (tests/fakes/limits.ts): the service parks the adapter until that reset — not for the 300 s
 * cooldown — the task runs on the fallback meanwhile without burning an attempt, the terminal
 * says so and numbers the attempts as the retry limit counts them, and `service status` shows the
 * park with `reset_named: true` and its time. Skipped only for a CLI that is not on PATH.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cli } from "./_e2e.ts";
import { realBinary, realRun, writeAndReport } from "./_real_cli.ts";
import { startFakeAnthropicApi } from "./fakes/anthropic_api.ts";
import { startFakeResponsesApi } from "./fakes/openai_responses_api.ts";
import { startFakeGeminiApi } from "./fakes/gemini_api.ts";
import { anthropicUsageLimit, googleQuota, openaiUsageLimit } from "./fakes/limits.ts";
import { tempDir } from "./helpers.ts";

const claude = await realBinary("claude", "@anthropic-ai/claude-code@2.1.197");
const codex = await realBinary("codex", "@openai/codex@0.169.0");
const gemini = await realBinary("gemini", "@google/gemini-cli@0.61.0");
const opts = { sanitizeResources: false, sanitizeOps: false };

const FILE = "limited.txt";
const TEXT = "written by the fallback";

/** service.yaml lines: a fallback adapter (a module) that writes the file and reports. */
async function fallback(dir: string): Promise<string> {
  const module = join(dir, "backup.ts");
  await Deno.writeTextFile(
    module,
    `export default {
  name: "backup", binary: "sh", apiKeyEnv: [], passEnv: [],
  acceptsMcpConfig: false, supportsEffort: false,
  buildArgv: () => ["-c", ${JSON.stringify(writeAndReport(FILE, TEXT))}],
};
`,
  );
  const path = JSON.stringify(module);
  return `fallback_adapters: [backup]\nadapters:\n  backup: { module: ${path} }\n`;
}

/** A reset some two hours ahead, with seconds (rounding must never go below it). */
const resetAhead = () => Math.floor(Date.now() / 1000) + 2 * 3600 + 13 * 60 + 17;
const iso = (s: number) => new Date(s * 1000).toISOString();

type Run = Awaited<ReturnType<typeof realRun>>;

/** The run parked `adapter` until a named reset within [min, max], and says so everywhere. */
async function assertParkedUntilNamedReset(
  run: Run,
  adapter: string,
  rule: RegExp,
  until: { min: number; max: number },
) {
  assert.equal(run.status, "completed", run.output);
  assert.equal(await Deno.readTextFile(join(run.dir, FILE)), `${TEXT}\n`);
  const limited = run.rows.filter((r) => r.type === "rate_limited");
  assert.ok(limited.length >= 1, `no rate_limited row:\n${run.output}`);
  const last = limited.at(-1)!.data;
  assert.equal(last.adapter, adapter);
  assert.equal(last.reset_named, true, `parked for the cooldown: ${JSON.stringify(last)}`);
  assert.match(String(last.rule), rule);
  const parked = Number(last.until);
  assert.ok(
    parked >= until.min && parked <= until.max,
    `${parked} not in [${until.min}, ${until.max}]`,
  );
  assert.match(
    run.output,
    new RegExp(`${adapter} parked until \\S+, the reset time its limit names`),
  );

  const claims = run.rows.filter((r) => r.type === "task_claimed")
    .map((r) => [r.data.attempt, r.data.adapter]);
  assert.deepEqual(claims, [[1, adapter], [2, "backup"]], "the fallback ran while it was parked");
  assert.match(run.output, /started \(backend, attempt 2, counted as 1 of 3, backup\)/);

  const status = JSON.parse((await cli(run.dir, "status", "--json")).out);
  const cooldown = status.rate_limits.cooldowns.find((c: { adapter: string }) =>
    c.adapter === adapter
  );
  assert.ok(cooldown, `status shows no park of ${adapter}`);
  assert.equal(cooldown.reset_named, true);
  assert.equal(cooldown.until, iso(parked));
}

Deno.test({
  ...opts,
  ignore: !claude,
  name:
    'real Claude Code: \'Claude AI usage limit reached|<epoch>\' (on its "error":"rate_limit" lines) parks claude until that epoch',
  async fn() {
    await using dir = await tempDir("limit-claude-");
    const reset = resetAhead();
    await using api = startFakeAnthropicApi({ limit: anthropicUsageLimit(reset) });
    await using run = await realRun("claude", FILE, {
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: api.url,
      CLAUDE_CODE_MAX_RETRIES: "0",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
    }, await fallback(dir.path));
    await assertParkedUntilNamedReset(run, "claude", /^claude:usage_limit$/, {
      min: reset,
      max: reset,
    });
  },
});

Deno.test({
  ...opts,
  ignore: !codex,
  name:
    "real Codex: usage_limit_reached with resets_at ('try again at h:mm PM') parks codex until the end of that minute",
  async fn() {
    await using dir = await tempDir("limit-codex-");
    const reset = resetAhead();
    await using api = startFakeResponsesApi({
      limit: openaiUsageLimit({ atEpochS: reset, inSeconds: 8000 }),
    });
    await using run = await realRun("codex", FILE, {
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: `${api.url}/v1`,
    }, await fallback(dir.path));
    // Codex prints the local time to the minute: parked to its end, never before the reset.
    const minuteEnd = Math.floor(reset / 60) * 60 + 60;
    await assertParkedUntilNamedReset(run, "codex", /^codex:usage_limit$/, {
      min: minuteEnd,
      max: minuteEnd,
    });
  },
});

Deno.test({
  ...opts,
  ignore: !gemini,
  name:
    "real Gemini CLI: RESOURCE_EXHAUSTED with a long retryDelay ('Suggested retry after') parks gemini that long, rounded up",
  async fn() {
    await using dir = await tempDir("limit-gemini-");
    const delay = 8000.482913;
    await using api = startFakeGeminiApi({
      limit: googleQuota("GenerateRequestsPerHourPerProjectPerModel", delay),
    });
    const before = Date.now() / 1000;
    await using run = await realRun("gemini", FILE, {
      GEMINI_API_KEY: "test-key",
      GOOGLE_GEMINI_BASE_URL: api.url,
    }, await fallback(dir.path));
    const after = Date.now() / 1000;
    await assertParkedUntilNamedReset(run, "gemini", /^gemini:quota$|^provider:quota_exceeded$/, {
      min: Math.ceil(before + delay),
      max: Math.ceil(after + delay),
    });
  },
});
