/**
 * The REAL Claude Code run by the service while its provider's stand-in answers 529 Overloaded
 * on every call (tests/fakes/anthropic_api.ts): each attempt fails, is retried, and the task fails
 * after its 3 attempts with Claude Code's own message ("API Error: 529 Overloaded …") in the
 * reason the journal, `service status` and the board carry, never the JSON line it came in.
 * Skipped only when `claude` is not on PATH.
 */
import assert from "node:assert/strict";
import { cli } from "./_e2e.ts";
import { realBinary, realRun } from "./_real_cli.ts";
import { startFakeAnthropicApi } from "./fakes/anthropic_api.ts";

const claude = await realBinary("claude", "@anthropic-ai/claude-code@2.1.197");

Deno.test({
  ignore: !claude,
  sanitizeResources: false,
  sanitizeOps: false,
  name:
    "real Claude Code whose provider stays overloaded: the task fails after 3 attempts, each with Claude's own 'API Error: 529 Overloaded', not a JSON line",
  async fn() {
    await using api = startFakeAnthropicApi({ mode: "overloaded" });
    await using run = await realRun("claude", "never.txt", {
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: api.url,
      CLAUDE_CODE_MAX_RETRIES: "0",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_TELEMETRY: "1",
    });
    assert.equal(run.status, "failed", run.output);
    assert.equal(run.rows.filter((r) => r.type === "agent_exited").length, 3, run.output);
    const reasons = run.rows.filter((r) => r.type === "task_retried" || r.type === "task_failed")
      .map((r) => String(r.data.reason));
    assert.equal(reasons.length, 3, reasons.join("\n"));
    for (const reason of reasons) {
      assert.match(reason, /\(exit 1\)[^:]*: API Error: 529 Overloaded\b/);
      assert.doesNotMatch(reason, /\{"type"/, "Claude's message, not its JSON line");
    }
    const status = (await cli(run.dir, "status")).out;
    assert.match(status, /FAILED: .*API Error: 529 Overloaded.*\(after 3 failed attempts\)/);
  },
});
