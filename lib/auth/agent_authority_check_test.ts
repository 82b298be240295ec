import assert from "node:assert/strict";
import { agentAuthorityChecks } from "./agent_authority_check.ts";

const OPS = { principal: "ops", scope: "operator" as const, token_env: "OPS_TOKEN" };

Deno.test("doctor fails agent_env that forwards the service's secrets, and warns that host agents are no boundary", () => {
  const cases: [string, Parameters<typeof agentAuthorityChecks>[0], string[]][] = [
    ["container, nothing forwarded", { isolation: "container", agentEnv: [], tokens: [] }, []],
    ["host agents", { isolation: "worktree", agentEnv: [], tokens: [] }, ["warn"]],
    [
      "a configured token's variable",
      { isolation: "container", agentEnv: ["OPS_TOKEN", "FOO"], tokens: [OPS] },
      ["fail:OPS_TOKEN"],
    ],
    [
      "SERVICE_TOKEN and the audit key",
      { isolation: "worktree", agentEnv: ["SERVICE_TOKEN", "SERVICE_AUDIT_KEY"], tokens: [] },
      ["fail:SERVICE_TOKEN, SERVICE_AUDIT_KEY", "warn"],
    ],
  ];
  for (const [name, facts, want] of cases) {
    const got = agentAuthorityChecks(facts).map((r) =>
      r.ok ? (r.warning ? "warn" : "ok") : `fail:${/forwards (.*) to every/.exec(r.detail)![1]}`
    );
    assert.deepEqual(got, want, name);
  }
  const warn = agentAuthorityChecks({ isolation: "worktree", agentEnv: [], tokens: [] })[0];
  assert.match(warn.detail, /as the local operator \(no token is configured\)/);
  assert.match(warn.fix!, /isolation: container/);
});
