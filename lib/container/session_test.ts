import assert from "node:assert/strict";
import { CONTAINER_HOME, containerEnvironment } from "./session.ts";
import { splitEnvironment } from "./launcher.ts";

const host = {
  PATH: "/usr/local/bin:/usr/bin",
  HOME: "/home/me",
  TMPDIR: "/tmp/me",
  LANG: "C.UTF-8",
  HTTPS_PROXY: "http://proxy:3128",
  ANTHROPIC_API_KEY: "sk-secret",
  SERVICE_TASK_ID: "t1",
};

Deno.test("containerEnvironment(): no host paths, a home of its own, no unreachable proxy without a network", () => {
  const env = containerEnvironment(host, { network: "none" });
  assert.equal(env.PATH, undefined);
  assert.equal(env.TMPDIR, undefined);
  assert.equal(env.HOME, CONTAINER_HOME);
  assert.equal(env.HTTPS_PROXY, undefined);
  assert.equal(env.ANTHROPIC_API_KEY, "sk-secret");
  assert.equal(env.GIT_CONFIG_KEY_0, "safe.directory");
  assert.equal(containerEnvironment(host, { network: "default" }).HTTPS_PROXY, "http://proxy:3128");
});

Deno.test("splitEnvironment(): secrets go by name, only non-secret names the runtime also uses by value", () => {
  const { names, values, secrets } = splitEnvironment(
    containerEnvironment(host, { network: "none" }),
  );
  assert.ok(names.includes("ANTHROPIC_API_KEY"));
  assert.equal(secrets.ANTHROPIC_API_KEY, "sk-secret");
  assert.deepEqual(Object.keys(values).sort(), ["HOME", "LANG"]);
});
