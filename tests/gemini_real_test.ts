/**
 * The REAL Gemini CLI (`npm i -g @google/gemini-cli@0.61.0`) run by the service against
 * tests/fakes/gemini_api.ts with `GOOGLE_GEMINI_BASE_URL` set and a fresh HOME (where Gemini
 * alone would guess the `gateway` auth type and exit 41): it writes a file in its worktree,
 * reports completion itself over HTTP, its usage is priced per model it routed to (cached input
 * discounted), and its work lands. A rejected key fails the task once, with Gemini's reason.
 * Skipped only when `gemini` is not on PATH.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/orchestrator/run.ts";
import { startFakeGeminiApi } from "./fakes/gemini_api.ts";
import { journalOf, withEnv } from "./_e2e.ts";
import { realBinary, realCliWorkspace, writeAndReport } from "./_real_cli.ts";
import { tempDir } from "./helpers.ts";
import { priceOf } from "../lib/agents/prices.ts";

const gemini = await realBinary("gemini", "@google/gemini-cli@0.61.0");
const quiet = { out: () => {}, port: 0 };

Deno.test({
  name: "real Gemini via the service: API-key auth selected, writes, reports, is priced, lands",
  ignore: !gemini,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir();
    await using home = await tempDir();
    const usage = { prompt: 3000, cached: 1000, candidates: 50, thoughts: 10 };
    await using api = startFakeGeminiApi({
      commands: [writeAndReport("gemini.txt", "gemini was here")],
      finalText: "Wrote gemini.txt and reported.",
      usage,
    });
    await realCliWorkspace(dir.path, "gemini", "gemini.txt");
    using _env = withEnv({
      GEMINI_API_KEY: "test-key",
      GOOGLE_GEMINI_BASE_URL: api.url,
      HOME: home.path,
    });
    const result = await runPlan({ root: dir.path, ...quiet });
    assert.equal(result.status, "completed", result.problems.join("; "));
    assert.equal(await Deno.readTextFile(join(dir.path, "gemini.txt")), "gemini was here\n");

    const streams = api.requests.filter((r) => r.path.includes(":streamGenerateContent?alt=sse"));
    assert.equal(streams.length, 2, "a tool call, then the final text");
    assert.equal(streams[0].headers["x-goog-api-key"], "test-key");

    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    const completed = rows.find((r) => r.type === "task_completed");
    assert.ok(completed, "the task was reported");
    assert.equal(completed.data.recovered, undefined, "Gemini reported itself over HTTP");
    assert.equal(completed.data.summary, "wrote gemini.txt");
    assert.ok(rows.some((r) => r.type === "task_merged"), "its work landed");

    const records = (await Deno.readTextFile(join(dir.path, ".sdd/metrics/cost.jsonl")))
      .trim().split("\n").map((l) => JSON.parse(l));
    const models = new Set(api.requests.map((r) => /models\/([^:]+):/.exec(r.path)?.[1]));
    assert.deepEqual(new Set(records.map((r) => r.model)), models, "one record per model called");
    let expected = 0;
    for (const r of records) {
      const calls = api.requests.filter((q) => q.path.includes(`/models/${r.model}:`)).length;
      const p = priceOf(r.model);
      const cost = (usage.prompt - usage.cached) * p.inputPerMTok +
        usage.cached * p.cachedInputPerMTok + (usage.candidates + usage.thoughts) * p.outputPerMTok;
      assert.equal(r.micro_usd, Math.round(calls * cost), `${r.model}: cached input discounted`);
      expected += r.micro_usd;
    }
    const report = JSON.parse(
      await Deno.readTextFile(join(dir.path, ".sdd/runtime/cost_report.json")),
    );
    assert.equal(report.total_micro_usd, expected);
  },
});

Deno.test({
  name: "real Gemini via the service: a rejected key fails the task once, with Gemini's reason",
  ignore: !gemini,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir();
    await using home = await tempDir();
    await using api = startFakeGeminiApi({ mode: "auth" });
    await realCliWorkspace(dir.path, "gemini", "gemini.txt");
    using _env = withEnv({
      GEMINI_API_KEY: "bad-key",
      GOOGLE_GEMINI_BASE_URL: api.url,
      HOME: home.path,
    });
    const result = await runPlan({ root: dir.path, ...quiet });
    assert.equal(result.status, "failed", result.problems.join("; "));
    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    assert.equal(rows.filter((r) => r.type === "agent_exited").length, 1, "not retried");
    const failed = rows.find((r) => r.type === "task_failed");
    assert.ok(failed);
    assert.match(
      String(failed.data.reason),
      /^agent exited \d+ \(auth error\): API key not valid\. Please pass a valid API key\.;/,
    );
    assert.match(String(failed.data.reason), /not retried/);
  },
});

Deno.test({
  name: "real Gemini without its auth selected (a generic command) exits 41 once, not retried",
  ignore: !gemini,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using dir = await tempDir();
    await using home = await tempDir();
    await using api = startFakeGeminiApi();
    // What the gemini adapter does NOT do here: select API-key auth. Gemini guesses `gateway`.
    await realCliWorkspace(
      dir.path,
      "generic",
      "gemini.txt",
      "cli_command: [gemini, --approval-mode, yolo, --skip-trust, --output-format, stream-json]\n" +
        "prompt_flag: --prompt\nagent_env: [GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL]\n",
    );
    using _env = withEnv({
      GEMINI_API_KEY: "test-key",
      GOOGLE_GEMINI_BASE_URL: api.url,
      HOME: home.path,
    });
    const result = await runPlan({ root: dir.path, ...quiet });
    assert.equal(result.status, "failed", result.problems.join("; "));
    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    const exits = rows.filter((r) => r.type === "agent_exited").map((r) => r.data.exit_code);
    assert.deepEqual(exits, [41], "one attempt");
    const failed = rows.find((r) => r.type === "task_failed");
    assert.match(
      String(failed?.data.reason),
      /^agent exited 41 \(auth error\): Invalid auth method selected\.; .*\(not retried/,
    );
    assert.equal(api.requests.length, 0, "Gemini gave up before calling the API");
  },
});
