import assert from "node:assert/strict";
import { KILL_GRACE_MS } from "../agents/process.ts";
import { parseConfig } from "../config/load.ts";
import { orchestratorSettings, type SettingsSource } from "./settings.ts";

const YAML = "cli: claude\nroles:\n  backend: {}\n  architect: {}\n" +
  "  qa: {timeout_minutes: 2.5, max_agents: 1, model: small, quality_gates: [{name: t, command: x}]}\n";

function source(over: Partial<SettingsSource> = {}, yaml = YAML): SettingsSource {
  return {
    config: parseConfig(yaml, "service.yaml"),
    env: {},
    tokens: [],
    taskHistory: "",
    ...over,
  };
}

Deno.test("orchestratorSettings(): service.yaml's defaults when nothing else is said", () => {
  const s = orchestratorSettings(source());
  assert.equal(s.maxAgents, 4);
  assert.equal(s.model, undefined);
  assert.equal(s.requireApproval, false);
  assert.equal(s.landUnreported, false);
  assert.deepEqual(s.nudge, { threshold: 0.3, min_completions: 3 });
  assert.deepEqual(s.agentEnv, []);
  assert.equal(s.graceMs, KILL_GRACE_MS);
  assert.equal(s.rateLimitCooldownS, undefined);
  assert.equal(s.roles.qa.max_agents, 1);
  assert.deepEqual(s.qualityGates({ role: "qa" }), [{ name: "t", command: "x", timeout_s: 600 }]);
  assert.deepEqual(s.qualityGates({ role: "backend" }), []);
});

Deno.test("orchestratorSettings(): agent timeouts by role minutes, scope and role, history, or the environment", () => {
  const s = orchestratorSettings(source());
  assert.equal(s.timeoutS({ role: "qa", scope: "large" }), 150, "role timeout_minutes wins");
  assert.equal(s.timeoutS({ role: "backend", scope: "small" }), 900);
  assert.equal(s.timeoutS({ role: "architect", scope: "small" }), 7200);
  const history = Array.from(
    { length: 6 },
    () => JSON.stringify({ role: "backend", scope: "small", duration_s: 100 }),
  ).join("\n");
  assert.equal(
    orchestratorSettings(source({ taskHistory: history })).timeoutS({
      role: "backend",
      scope: "small",
    }),
    450,
    "adaptive: p90 × 1.5, clamped to half the base",
  );
  const forced = orchestratorSettings(source({ env: { SERVICE_AGENT_TIMEOUT_S: "7" } }));
  assert.equal(forced.timeoutS({ role: "qa", scope: "large" }), 7, "the environment wins");
  const bad = orchestratorSettings(source({ env: { SERVICE_AGENT_TIMEOUT_S: "soon" } }));
  assert.equal(bad.timeoutS({ role: "backend", scope: "small" }), 900, "not a number: ignored");
});

Deno.test("orchestratorSettings(): the environment sets the kill grace, the cooldown and the agents' worker-scope token", () => {
  const env = {
    SERVICE_KILL_GRACE_S: "0",
    SERVICE_RATE_LIMIT_COOLDOWN_S: "2",
    OPS_TOKEN: "secret",
  };
  const s = orchestratorSettings(source({
    env,
    tokens: [
      { principal: "ci", scope: "reader", token_env: "CI_TOKEN" },
      { principal: "ops", scope: "operator", token_env: "OPS_TOKEN" },
    ],
  }));
  assert.equal(s.graceMs, 0, "a zero grace is a grace of zero, not the default");
  assert.equal(s.rateLimitCooldownS, 2);
  // Agents' credentials are minted per session (lib/auth/agent_credentials_test.ts), not here.
  assert.equal(
    orchestratorSettings(source({ env: { SERVICE_KILL_GRACE_S: "-1" } })).graceMs,
    KILL_GRACE_MS,
  );
});

Deno.test("orchestratorSettings(): max_agents, model, effort, approval, recovery and the nudge from service.yaml", () => {
  const s = orchestratorSettings(source(
    {},
    "cli: claude\nmax_agents: 9\nmodel: big\neffort: high\nagent_env: [FOO]\nroles: [backend]\n" +
      "review: {require_approval: true}\nrecovery: {land_unreported: true}\n" +
      "verification_nudge: {threshold: 0.5, min_completions: 10}\n",
  ));
  assert.equal(s.maxAgents, 9);
  assert.equal(s.model, "big");
  assert.equal(s.effort, "high");
  assert.deepEqual(s.agentEnv, ["FOO"]);
  assert.equal(s.requireApproval, true);
  assert.equal(s.landUnreported, true);
  assert.deepEqual(s.nudge, { threshold: 0.5, min_completions: 10 });
});
