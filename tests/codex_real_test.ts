/**
 * The REAL Codex CLI (`npm i -g @openai/codex@0.169.0`) run by the service against
 * tests/fakes/openai_responses_api.ts: it writes a file in its worktree inside its
 * `workspace-write` sandbox, reports completion itself over HTTP, its usage is priced for the
 * model it really used (from its session record) with cached input discounted, and its work
 * lands. A 401 from the provider fails the task at once, with Codex's own error line.
 * Skipped only when `codex` is not on PATH.
 */
import assert from "node:assert/strict";
import { startFakeResponsesApi } from "./fakes/openai_responses_api.ts";
import {
  assertFailedOnce,
  assertReportedAndLanded,
  costLines,
  realBinary,
  realRun,
  writeAndReport,
} from "./_real_cli.ts";
import { priceOf } from "../lib/cost/prices.ts";

const codex = await realBinary("codex", "@openai/codex@0.169.0");
const real = { ignore: !codex, sanitizeResources: false, sanitizeOps: false };

Deno.test({
  ...real,
  name: "real Codex via the service: writes, reports over HTTP, is priced for its model, lands",
  async fn() {
    const usage = { input: 2000, cached: 500, output: 60, reasoning: 20 };
    await using api = startFakeResponsesApi({
      commands: [writeAndReport("codex.txt", "codex was here")],
      finalText: "Wrote codex.txt and reported.",
      usage,
    });
    await using run = await realRun("codex", "codex.txt", {
      OPENAI_API_KEY: "test-key",
      OPENAI_BASE_URL: `${api.url}/v1`,
    });
    await assertReportedAndLanded(run, "codex.txt", "codex was here");

    const calls = api.requests.filter((r) => r.method === "POST" && r.path === "/v1/responses");
    assert.equal(calls.length, 2, "a tool call, then the final message");
    assert.equal(calls[0].headers.authorization, "Bearer test-key", "OPENAI_API_KEY reached it");
    const model = (calls[0].body as { model: string }).model;

    const records = await costLines(run.dir);
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
  ...real,
  name: "real Codex via the service: a rejected key fails the task once, with Codex's reason",
  async fn() {
    await using api = startFakeResponsesApi({ mode: "auth" });
    await using run = await realRun("codex", "codex.txt", {
      OPENAI_API_KEY: "bad-key",
      OPENAI_BASE_URL: `${api.url}/v1`,
    });
    assertFailedOnce(run, /^agent exited \d+ \(auth error\): .*401.*Incorrect API key provided/);
  },
});
