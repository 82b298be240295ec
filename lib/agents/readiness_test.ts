import assert from "node:assert/strict";
import { adapterReadiness, sessionView } from "./readiness.ts";
import { claudeAdapter } from "./adapters/claude.ts";
import { geminiAdapter } from "./adapters/gemini.ts";
import { codexAdapter } from "./adapters/codex.ts";

const facts = {
  binaryPath: "/usr/bin/claude",
  env: {} as Record<string, string>,
  cooldownRemainingS: 0,
  configured: true,
  builtin: true,
};

Deno.test("adapterReadiness() names the set key variables, never their values", () => {
  const r = adapterReadiness(claudeAdapter, { ...facts, env: { ANTHROPIC_API_KEY: "sk-secret" } });
  assert.equal(r.ready, true);
  assert.deepEqual(r.api_keys_set, ["ANTHROPIC_API_KEY"]);
  assert.ok(!JSON.stringify(r).includes("sk-secret"));
});

Deno.test("adapterReadiness() accepts a gateway token with its endpoint (same rule as preflight)", () => {
  const r = adapterReadiness(claudeAdapter, {
    ...facts,
    env: { ANTHROPIC_BASE_URL: "http://127.0.0.1:9", ANTHROPIC_AUTH_TOKEN: "t" },
  });
  assert.equal(r.api_key_ok, true);
  assert.deepEqual(r.api_keys_set, ["ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"]);
});

Deno.test("adapterReadiness() reports the first problem with its fix", () => {
  const missing = adapterReadiness(claudeAdapter, { ...facts, binaryPath: undefined });
  assert.equal(missing.ready, false);
  assert.match(missing.fix!, /install the claude CLI/);
  const noKey = adapterReadiness(claudeAdapter, facts);
  assert.match(noKey.fix!, /^export ANTHROPIC_API_KEY=… \(or CLAUDE_CODE_OAUTH_TOKEN\)$/);
  const cooling = adapterReadiness(claudeAdapter, {
    ...facts,
    env: { CLAUDE_CODE_OAUTH_TOKEN: "x" },
    cooldownRemainingS: 41.2,
  });
  assert.equal(cooling.cooldown_remaining_s, 42);
  assert.match(cooling.fix!, /parked by a rate or usage limit for 42 s: .*fallback_adapters/);
});

Deno.test("adapterReadiness() is not ready when the CLI could not start headless", () => {
  const vertex = adapterReadiness(geminiAdapter, {
    ...facts,
    binaryPath: "/usr/bin/gemini",
    env: { GOOGLE_API_KEY: "", GEMINI_API_KEY: "g", GOOGLE_GENAI_USE_VERTEXAI: "true" },
  });
  assert.equal(vertex.api_key_ok, true);
  assert.equal(vertex.ready, false);
  assert.match(vertex.headless_problem ?? "", /^gemini cannot start headless: Vertex AI/);
  assert.match(vertex.fix ?? "", /GOOGLE_CLOUD_PROJECT/);
  const gateway = adapterReadiness(geminiAdapter, {
    ...facts,
    binaryPath: "/usr/bin/gemini",
    env: { GEMINI_API_KEY: "g", GOOGLE_GEMINI_BASE_URL: "http://127.0.0.1:9" },
  });
  assert.equal(gateway.ready, true, "the adapter selects API-key auth for an endpoint");
  assert.equal(gateway.headless_problem, null);
  const badUrl = adapterReadiness(codexAdapter, {
    ...facts,
    binaryPath: "/usr/bin/codex",
    env: { OPENAI_API_KEY: "k", OPENAI_BASE_URL: "127.0.0.1:9/v1" },
  });
  assert.equal(badUrl.ready, false);
  assert.match(badUrl.fix ?? "", /http:\/\/127\.0\.0\.1:8080\/v1/);
});

Deno.test("sessionView() prefers the fresher of log and heartbeat; accepts ISO start times", () => {
  const v = sessionView({
    pid: { session_id: "s", pid: 7, task_id: "t", started_at: "1970-01-01T00:01:40Z" as never },
    heartbeat: {
      session_id: "s",
      pid: 7,
      alive: true,
      last_output_at: 150,
      log_bytes: 3,
      updated_at: 190,
    },
    log: { bytes: 9, mtime: 170 },
    alive: true,
    now: 200,
  });
  assert.equal(v.started_at, 100);
  assert.equal(v.elapsed_s, 100);
  assert.equal(v.last_output_age_s, 30);
  assert.equal(v.log_bytes, 9);
  assert.equal(v.heartbeat_age_s, 10);
  const fresh = sessionView({ pid: { session_id: "n" }, alive: false, now: 5 });
  assert.equal(fresh.last_output_age_s, null);
  assert.equal(fresh.log_bytes, null);
  assert.equal(fresh.elapsed_s, null);
});
