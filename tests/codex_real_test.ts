/**
 * The REAL Codex CLI (`npm i -g @openai/codex@0.169.0`) run by the service against
 * tests/fakes/openai_responses_api.ts: it writes a file in its worktree inside its
 * `workspace-write` sandbox, reports completion itself over HTTP, its usage is priced for the
 * model it really used (from its session record) with cached input discounted, and its work
 * lands. A 401 from the provider fails the task at once, with Codex's own error line.
 * Skipped only when `codex` is not on PATH.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/orchestrator/run.ts";
import { startFakeResponsesApi } from "./fakes/openai_responses_api.ts";
import { journalOf, withEnv } from "./_e2e.ts";
import { realBinary, realCliWorkspace, writeAndReport } from "./_real_cli.ts";
import { tempDir } from "./helpers.ts";
import { priceOf } from "../lib/agents/prices.ts";

const codex = await realBinary("codex", "@openai/codex@0.169.0");
const quiet = { out: () => {}, port: 0 };

Deno.test({
  name: "real Codex via the service: writes, reports over HTTP, is priced for its model, lands",
  ignore: !codex,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir();
    await using home = await tempDir();
    const usage = { input: 2000, cached: 500, output: 60, reasoning: 20 };
    await using api = startFakeResponsesApi({
      commands: [writeAndReport("codex.txt", "codex was here")],
      finalText: "Wrote codex.txt and reported.",
      usage,
    });
    await realCliWorkspace(dir.path, "codex", "codex.txt");
    using _env = withEnv({
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: `${api.url}/v1`,
      CODEX_HOME: home.path,
    });
    const result = await runPlan({ root: dir.path, ...quiet });
    assert.equal(result.status, "completed", result.problems.join("; "));
    assert.equal(await Deno.readTextFile(join(dir.path, "codex.txt")), "codex was here\n");

    const calls = api.requests.filter((r) => r.method === "POST" && r.path === "/v1/responses");
    assert.equal(calls.length, 2, "a tool call, then the final message");
    assert.equal(calls[0].headers.authorization, "Bearer test-key", "OPENAI_API_KEY reached it");
    const model = (calls[0].body as { model: string }).model;

    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    const completed = rows.find((r) => r.type === "task_completed");
    assert.ok(completed, "the task was reported");
    assert.equal(completed.data.recovered, undefined, "Codex reported itself over HTTP");
    assert.equal(completed.data.summary, "wrote codex.txt");
    assert.ok(rows.some((r) => r.type === "task_merged"), "its work landed");

    const records = (await Deno.readTextFile(join(dir.path, ".sdd/metrics/cost.jsonl")))
      .trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(records.length, 1);
    assert.equal(records[0].model, model, "priced for the model Codex used");
    assert.equal(records[0].adapter, "codex");
    assert.equal(records[0].input_tokens, 2 * usage.input);
    assert.equal(records[0].output_tokens, 2 * usage.output);
    const p = priceOf(model);
    const perCall = (usage.input - usage.cached) * p.inputPerMTok +
      usage.cached * p.cachedInputPerMTok + usage.output * p.outputPerMTok;
    assert.equal(records[0].micro_usd, Math.round(2 * perCall), "cached input discounted");
  },
});

Deno.test({
  name: "real Codex via the service: a rejected key fails the task once, with Codex's reason",
  ignore: !codex,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir();
    await using home = await tempDir();
    await using api = startFakeResponsesApi({ mode: "auth" });
    await realCliWorkspace(dir.path, "codex", "codex.txt");
    using _env = withEnv({
      OPENAI_API_KEY: "bad-key",
      OPENAI_BASE_URL: `${api.url}/v1`,
      CODEX_HOME: home.path,
    });
    const result = await runPlan({ root: dir.path, ...quiet });
    assert.equal(result.status, "failed", result.problems.join("; "));
    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    assert.equal(rows.filter((r) => r.type === "agent_exited").length, 1, "not retried");
    const failed = rows.find((r) => r.type === "task_failed");
    assert.ok(failed);
    assert.match(String(failed.data.reason), /^agent exited \d+ \(auth error\): .*401/);
    assert.match(String(failed.data.reason), /Incorrect API key provided/);
    assert.match(String(failed.data.reason), /not retried/);
  },
});
