import assert from "node:assert/strict";
import {
  agentNetworkShape,
  networkPlan,
  type NetworkTarget,
  setupNetworkShape,
} from "./network.ts";

const targets: NetworkTarget[] = [
  { host: "127.0.0.1", port: 8052, why: "task server" },
  { host: "api.anthropic.com", port: 443, why: "model endpoint" },
  { host: "pypi.org", port: 443, why: "allow_hosts" },
  { host: "api.anthropic.com", port: 443, why: "allow_hosts" },
  { host: "localhost", port: 9000, why: "allow_hosts" },
];

Deno.test("networkPlan(): restricted relays every allowed host and nothing else, names on their own loopback addresses", () => {
  const plan = networkPlan(agentNetworkShape("restricted"), targets);
  assert.equal(plan.network, "none");
  assert.deepEqual(plan.relays.map((r) => `${r.listen.ip}:${r.listen.port}`), [
    "127.0.0.1:8052",
    "127.0.0.2:443",
    "127.0.0.3:443",
    "127.0.0.1:9000",
    "::1:9000",
  ]);
  assert.deepEqual(plan.addHosts, [
    { name: "api.anthropic.com", ip: "127.0.0.2" },
    { name: "pypi.org", ip: "127.0.0.3" },
  ]);
  assert.equal(new Set(plan.relays.map((r) => r.socket)).size, plan.relays.length);
  assert.equal(plan.lowPorts, true);
});

Deno.test("networkPlan(): open relays only the host's loopback ports; none and setup relay nothing", () => {
  const open = networkPlan(agentNetworkShape("open"), targets);
  assert.equal(open.network, "default");
  assert.deepEqual(open.relays.map((r) => r.target.host), ["127.0.0.1", "localhost", "localhost"]);
  assert.equal(open.lowPorts, false);
  const none = networkPlan(agentNetworkShape("none"), targets);
  assert.deepEqual([none.network, none.relays.length], ["none", 0]);
  assert.equal(networkPlan(setupNetworkShape(true), targets).network, "default");
  assert.equal(networkPlan(setupNetworkShape(false), targets).network, "none");
});
