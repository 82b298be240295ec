/**
 * The REAL Gemini CLI (`npm i -g @google/gemini-cli@0.61.0`) run by the service against
 * tests/fakes/gemini_api.ts with `GOOGLE_GEMINI_BASE_URL` set and a fresh HOME (where Gemini
 * alone would guess the `gateway` auth type and exit 41): it writes a file in its worktree,
 * reports completion itself over HTTP, its usage is priced per model it routed to (cached input
 * discounted), and its work lands. A rejected key, and Gemini run without its auth selected,
 * fail the task once with Gemini's own reason. Skipped only when `gemini` is not on PATH.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startFakeGeminiApi } from "./fakes/gemini_api.ts";
import {
  assertFailedOnce,
  assertReportedAndLanded,
  costLines,
  realBinary,
  realRun,
  writeAndReport,
} from "./_real_cli.ts";
import { priceOf } from "../lib/cost/prices.ts";

const gemini = await realBinary("gemini", "@google/gemini-cli@0.61.0");
const real = { ignore: !gemini, sanitizeResources: false, sanitizeOps: false };

Deno.test({
  ...real,
  name: "real Gemini via the service: API-key auth selected, writes, reports, is priced, lands",
  async fn() {
    const usage = { prompt: 3000, cached: 1000, candidates: 50, thoughts: 10 };
    await using api = startFakeGeminiApi({
      commands: [writeAndReport("gemini.txt", "gemini was here")],
      finalText: "Wrote gemini.txt and reported.",
      usage,
    });
    await using run = await realRun("gemini", "gemini.txt", {
      GEMINI_API_KEY: "test-key",
      GOOGLE_GEMINI_BASE_URL: api.url,
    });
    await assertReportedAndLanded(run, "gemini.txt", "gemini was here");

    const streams = api.requests.filter((r) =>
      r.path.endsWith(":streamGenerateContent") && r.search === "?alt=sse"
    );
    assert.equal(streams.length, 2, "a tool call, then the final text");
    assert.equal(streams[0].headers["x-goog-api-key"], "test-key");

    const records = await costLines(run.dir);
    const models = new Set(api.requests.map((r) => /models\/([^:]+):/.exec(r.path)?.[1]));
    assert.deepEqual(new Set(records.map((r) => r.model)), models, "one record per model called");
    let total = 0;
    for (const r of records) {
      const model = String(r.model);
      const calls = api.requests.filter((q) => q.path.includes(`/models/${model}:`)).length;
      const p = priceOf(model);
      const cost = (usage.prompt - usage.cached) * p.inputPerMTok +
        usage.cached * p.cachedInputPerMTok + (usage.candidates + usage.thoughts) * p.outputPerMTok;
      assert.equal(r.micro_usd, Math.round(calls * cost), `${model}: cached input discounted`);
      total += Number(r.micro_usd);
    }
    const report = JSON.parse(
      await Deno.readTextFile(join(run.dir, ".sdd/runtime/cost_report.json")),
    );
    assert.equal(report.total_micro_usd, total);
  },
});

Deno.test({
  ...real,
  name: "real Gemini via the service: a rejected key fails the task once, with Gemini's reason",
  async fn() {
    await using api = startFakeGeminiApi({ mode: "auth" });
    await using run = await realRun("gemini", "gemini.txt", {
      GEMINI_API_KEY: "bad-key",
      GOOGLE_GEMINI_BASE_URL: api.url,
    });
    assertFailedOnce(
      run,
      /^agent exited \d+ \(auth error\): API key not valid\. Please pass a valid API key\.;/,
    );
  },
});

Deno.test({
  ...real,
  name: "real Gemini without its auth selected (a generic command) exits 41 once, not retried",
  async fn() {
    await using api = startFakeGeminiApi();
    // What the gemini adapter does and a generic command does not: select API-key auth.
    await using run = await realRun(
      "generic",
      "gemini.txt",
      { GEMINI_API_KEY: "test-key", GOOGLE_GEMINI_BASE_URL: api.url },
      "cli_command: [gemini, --approval-mode, yolo, --skip-trust, --output-format, stream-json]\n" +
        "prompt_flag: --prompt\nagent_env: [GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL]\n",
    );
    assertFailedOnce(run, /^agent exited 41 \(auth error\): Invalid auth method selected\.;/);
    assert.equal(api.requests.length, 0, "Gemini gave up before calling the API");
  },
});
