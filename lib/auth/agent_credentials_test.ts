import assert from "node:assert/strict";
import {
  agentPrincipal,
  mintAgentCredential,
  revokeAgentCredential,
  revokeRunCredentials,
} from "./agent_credentials.ts";

Deno.test("an agent credential names its workspace, run, task and session, and nothing else takes it", () => {
  const binding = { runId: "r1", taskId: "t1", sessionId: "s-1" };
  const token = mintAgentCredential("/ws/a", binding);
  assert.match(token, /^svcagent_[0-9a-f]{64}$/);
  assert.deepEqual(agentPrincipal("/ws/a", token), {
    principal: "agent:s-1",
    scope: "agent",
    run_id: "r1",
    task_id: "t1",
    session_id: "s-1",
  });
  assert.equal(
    Deno.env.toObject()[token] ?? Object.values(Deno.env.toObject()).find((v) => v === token),
    undefined,
    "never in the environment",
  );
  const hostile = [
    "",
    "svcagent_",
    token.slice(0, -1),
    token + "0",
    token.toUpperCase(),
    `x${token}`,
  ];
  for (const t of hostile) assert.equal(agentPrincipal("/ws/a", t), undefined, JSON.stringify(t));
  assert.equal(agentPrincipal("/ws/b", token), undefined, "another workspace's server refuses it");
  const again = mintAgentCredential("/ws/a", binding);
  assert.equal(agentPrincipal("/ws/a", token), undefined, "a session has one credential");
  revokeAgentCredential("/ws/a", "s-1");
  assert.equal(agentPrincipal("/ws/a", again), undefined, "revoked with its session");
  const other = mintAgentCredential("/ws/a", { runId: "r2", taskId: "t2", sessionId: "s-2" });
  revokeRunCredentials("/ws/a", "r2");
  assert.equal(agentPrincipal("/ws/a", other), undefined, "revoked with its run");
});
