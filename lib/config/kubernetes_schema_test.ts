/** `workers.kubernetes` and `server.trusted_proxy` in service.yaml: defaults and hostile values. */
import assert from "node:assert/strict";
import { parseConfig } from "./load.ts";
import { ValidationError } from "./errors.ts";

const BASE = "cli: claude\nroles: [backend]\nserver:\n  public_url: http://service:8052\n";

Deno.test("workers.kubernetes: the documented keys, with their defaults", () => {
  const c = parseConfig(
    BASE + `workers:
  kubernetes:
    image: registry.example/service:1
    token_secret: service-tokens
    token_key: WORKER_TOKEN
    namespace: agents
    service_account: service-worker
    git_secret: service-git
    env_secrets: [service-provider-keys]
    resources:
      backend: { requests: { cpu: 500m, memory: 1Gi }, limits: { memory: 4Gi, cpu: 2 } }
    node_selector: { pool: agents }
    tolerations: [{ key: dedicated, operator: Equal, value: agents, effect: NoSchedule }]
    runtime_class: gvisor
    max_in_flight: 20
    active_deadline_s: 7200
`,
  );
  const k = c.workers.kubernetes!;
  assert.equal(k.max_in_flight, 20);
  assert.equal(k.ttl_after_finished_s, 3600);
  assert.equal(k.poll_interval_s, 2);
  assert.equal(k.drain_timeout_s, 25);
  assert.deepEqual(k.resources.backend.limits, { memory: "4Gi", cpu: "2" });
  assert.equal(parseConfig("cli: claude\nroles: [backend]\n").workers.kubernetes, undefined);
});

Deno.test("workers.kubernetes: what the API server would refuse is a configuration error naming the key", () => {
  const k = (body: string) => BASE + "workers:\n  kubernetes:\n" + body;
  const ok = "    image: x:1\n    token_secret: tokens\n";
  const table: [string, string, RegExp][] = [
    [
      "a misspelt key",
      k(ok + "    max_inflight: 3\n"),
      /max_inflight: unknown key .*did you mean 'max_in_flight'/,
    ],
    ["no token Secret", k("    image: x:1\n"), /token_secret/],
    [
      "an upper-case Secret name",
      k("    image: x:1\n    token_secret: Tokens\n"),
      /must be a Kubernetes object name/,
    ],
    ["a namespace with a dot", k(ok + "    namespace: a.b\n"), /must be a namespace name/],
    [
      "a node selector value of 64 characters",
      k(ok + `    node_selector: { pool: ${"a".repeat(64)} }\n`),
      /node_selector/,
    ],
    [
      "a quantity that is not one",
      k(ok + "    resources: { backend: { limits: { memory: 4GB } } }\n"),
      /must be a quantity/,
    ],
    [
      "a toleration effect that does not exist",
      k(ok + "    tolerations: [{ effect: Never }]\n"),
      /effect/,
    ],
    ["no Jobs at all", k(ok + "    max_in_flight: 0\n"), /max_in_flight/],
    [
      "no public URL for the pods",
      "cli: claude\nroles: [backend]\nworkers:\n  kubernetes:\n" + ok,
      /workers\.kubernetes needs server\.public_url/,
    ],
  ];
  for (const [what, text, message] of table) {
    assert.throws(
      () => parseConfig(text),
      (e: Error) => e instanceof ValidationError && message.test(e.message),
      what,
    );
  }
});

Deno.test("server.trusted_proxy: defaults, and a port and secret are required", () => {
  const c = parseConfig(BASE + "  trusted_proxy: { port: 8054, secret_env: PROXY_SECRET }\n");
  assert.deepEqual(c.server.trusted_proxy, {
    port: 8054,
    secret_env: "PROXY_SECRET",
    user_header: "X-Forwarded-User",
    secret_header: "X-Service-Proxy-Secret",
    scope: "operator",
  });
  assert.throws(() => parseConfig(BASE + "  trusted_proxy: { port: 8054 }\n"), /secret_env/);
  assert.throws(
    () => parseConfig(BASE + "  trusted_proxy: { port: 8054, secret_env: S, scope: worker }\n"),
    /scope/,
  );
});
