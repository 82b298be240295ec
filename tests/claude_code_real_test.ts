/**
 * Runs the REAL Claude Code binary (`npm i -g @anthropic-ai/claude-code`) with the argv of the
 * claude adapter against tests/fakes/anthropic_api.ts, and checks the cost parser and the
 * rate-limit scanner on its real output. Skipped only when `claude` is not on PATH.
 */
import assert from "node:assert/strict";
import { startFakeAnthropicApi } from "./fakes/anthropic_api.ts";
import { claudeAdapter } from "../lib/agents/adapters/claude.ts";
import { resolveBinary } from "../lib/agents/preflight.ts";
import { agentEnvironment } from "../lib/agents/env.ts";
import { parseClaudeLog } from "../lib/agents/adapters/claude_log.ts";
import { firstRateLimit, scanLog } from "../lib/agents/rate_limit.ts";
import { injectSkills } from "../lib/agents/skills.ts";
import { usageOf } from "../lib/agents/usage.ts";
import { addUsage, emptyCostReport } from "../lib/cost/report.ts";

const claudePath = await resolveBinary("claude", Deno.env.toObject());
if (!claudePath) {
  console.warn(
    "SKIP claude_code_real_test: `claude` not found in PATH " +
      "(install it with: npm i -g @anthropic-ai/claude-code)",
  );
}

async function runClaude(
  baseUrl: string,
  workdir: string,
  complexity?: "low",
  prompt = "Say done.",
) {
  const host = {
    PATH: Deno.env.get("PATH") ?? "",
    HOME: workdir,
    LANG: "C.UTF-8",
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: "test-key",
    // Documented Claude Code settings: no retries of 429s, no telemetry or other side traffic.
    CLAUDE_CODE_MAX_RETRIES: "0",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    SECRET_THAT_MUST_NOT_LEAK: "x",
  };
  const env = agentEnvironment(claudeAdapter, host, {
    serverUrl: "http://127.0.0.1:1",
    runId: "r1",
    taskId: "t1",
    sessionId: "s1",
  });
  assert.equal(env.SECRET_THAT_MUST_NOT_LEAK, undefined);
  const argv = claudeAdapter.buildArgv({ prompt, workdir, complexity });
  const out = await new Deno.Command(claudePath!, {
    args: argv,
    cwd: workdir,
    clearEnv: true,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(90_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test({
  name: "real Claude Code: a headless run exits 0 and its stream-json result gives the cost",
  ignore: !claudePath,
  async fn() {
    await using api = startFakeAnthropicApi({ inputTokens: 1200, outputTokens: 30 });
    const dir = await Deno.makeTempDir({ prefix: "claude-real-" });
    try {
      const run = await runClaude(api.url, dir, "low");
      assert.equal(run.code, 0, `claude failed:\n${run.stdout}\n${run.stderr}`);
      const messages = api.requests.filter((r) => r.path === "/v1/messages");
      assert.ok(messages.length >= 1, "claude called POST /v1/messages");
      const body = messages[0].body as { model: string; stream: boolean };
      assert.match(body.model, /haiku/, "complexity low routed to the cheapest model");
      assert.equal(body.stream, true);
      assert.equal(messages[0].headers["x-api-key"], "test-key");
      const events = parseClaudeLog(run.stdout);
      assert.equal(events.find((e) => e.kind === "session")?.kind, "session", "the init line");
      assert.equal(events.at(-1)?.kind, "usage", "the result line's usage is read");
      const usage = usageOf(events);
      assert.ok(usage, "the result line parses");
      // haiku list price: 1200 × 1 + 30 × 5 micro-USD, as Claude Code itself computed it.
      assert.equal(usage.microUsd, 1350);
      assert.equal(usage.source, "reported");
      const [model, m] = Object.entries(usage.byModel)[0];
      assert.match(model, /haiku/);
      assert.deepEqual(m, { inputTokens: 1200, outputTokens: 30, microUsd: 1350 });
      const report = addUsage(emptyCostReport(1), "t1", usage);
      assert.equal(report.total_micro_usd, 1350);
      assert.deepEqual(
        scanLog(run.stdout, parseClaudeLog),
        [],
        "a healthy run has no rate-limit match",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "real Claude Code: a 429 rate_limit_error is detected by the log scanner",
  ignore: !claudePath,
  async fn() {
    await using api = startFakeAnthropicApi({ mode: "rate_limit" });
    const dir = await Deno.makeTempDir({ prefix: "claude-real-" });
    try {
      const started = Date.now();
      const run = await runClaude(api.url, dir);
      assert.ok(Date.now() - started < 60_000, "no retry loop with CLAUDE_CODE_MAX_RETRIES=0");
      assert.notEqual(run.code, 0);
      const hit = firstRateLimit(scanLog(run.stdout + "\n" + run.stderr, parseClaudeLog));
      assert.ok(hit, `no rate limit found in:\n${run.stdout}\n${run.stderr}`);
      assert.match(hit.rule, /^claude:|^anthropic:|^provider:|^token:429$/);
      const calls = api.requests.filter((r) => r.path === "/v1/messages").length;
      assert.equal(calls, 1, "exactly one messages call: no retries");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "real Claude Code: the injected service skill is offered to the model and loads",
  ignore: !claudePath,
  async fn() {
    await using api = startFakeAnthropicApi({
      script: [{ skill: "service-task-api" }, { text: "done" }],
    });
    const dir = await Deno.makeTempDir({ prefix: "claude-skill-" });
    try {
      const init = await new Deno.Command("git", { args: ["init", "-q"], cwd: dir }).output();
      assert.ok(init.success);
      assert.deepEqual(await injectSkills(claudeAdapter, dir), [
        ".claude/skills/service-task-api/SKILL.md",
      ]);
      const run = await runClaude(api.url, dir, undefined, "Do the task.");
      assert.equal(run.code, 0, `claude failed:\n${run.stdout}\n${run.stderr}`);
      const init0 = JSON.parse(run.stdout.split("\n")[0]);
      assert.ok(init0.skills.includes("service-task-api"), "Claude Code lists the skill");
      const bodies = api.requests.filter((r) => r.path === "/v1/messages").map((r) =>
        JSON.stringify(r.body)
      );
      assert.ok(
        bodies.some((b) => b.includes("- service-task-api: Report to the orchestration service")),
        "the model is told the skill exists",
      );
      assert.ok(
        bodies.some((b) => b.includes("$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/complete")),
        "the Skill tool loaded the skill's text for the model",
      );
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
