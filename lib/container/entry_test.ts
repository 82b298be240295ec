import assert from "node:assert/strict";
import { entryArgv, entryScript, GO_LINE, NOT_LET_GO, procNetAddress } from "./entry.ts";
import { agentNetworkShape, networkPlan } from "./network.ts";

Deno.test("procNetAddress() writes an address as /proc/net/tcp does", () => {
  assert.equal(procNetAddress("127.0.0.1", 8052), "0100007F:1F74");
  assert.equal(procNetAddress("127.0.0.2", 443), "0200007F:01BB");
});

Deno.test("entryScript(): listeners before the agent, a watchdog on stdin, the agent with stdin closed", () => {
  const plan = networkPlan(agentNetworkShape("restricted"), [
    { host: "127.0.0.1", port: 8052, why: "task server" },
    { host: "api.example.com", port: 443, why: "model endpoint" },
  ]);
  const script = entryScript(plan.relays);
  const order = [
    "socat TCP4-LISTEN:8052,bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:/run/service-net/r0.sock",
    "socat TCP4-LISTEN:443,bind=127.0.0.2",
    "listening 0100007F:1F74 && listening 0200007F:01BB",
    "(cat <&3 >/dev/null 2>&1; kill -KILL -1) &",
    'exec "$@" </dev/null 3<&-',
  ].map((part) => script.indexOf(part));
  assert.ok(order.every((i) => i >= 0), script);
  assert.deepEqual(order, [...order].sort((a, b) => a - b));
  assert.ok(!entryScript([]).includes("socat"), "no relay, no socat needed");
  assert.deepEqual(entryArgv([], ["agent", "--x"]).slice(3), ["service-entry", "agent", "--x"]);
});

Deno.test("entryScript(held): the command waits for `go` on stdin after the relays listen and before the watchdog takes the rest of the input", () => {
  const plan = networkPlan(agentNetworkShape("restricted"), [
    { host: "127.0.0.1", port: 8052, why: "task server" },
  ]);
  const script = entryScript(plan.relays, true);
  const order = [
    "listening 0100007F:1F74",
    'IFS= read -r go && [ "$go" = go ] || exit 125',
    "(cat <&3 >/dev/null 2>&1; kill -KILL -1) &",
    'exec "$@" </dev/null 3<&-',
  ].map((part) => script.indexOf(part));
  assert.ok(order.every((i) => i >= 0), script);
  assert.deepEqual(order, [...order].sort((a, b) => a - b));
  assert.ok(
    !entryScript(plan.relays).includes("read -r go"),
    "a container not held starts at once",
  );
  assert.equal(GO_LINE, "go\n");
  assert.equal(NOT_LET_GO, 125);
});
