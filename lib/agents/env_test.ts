import assert from "node:assert/strict";
import { agentEnvironment } from "./env.ts";
import { adapterByName } from "./adapters/mod.ts";

const HOST = {
  PATH: "/usr/bin",
  HOME: "/home/a",
  USER: "a",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_CTYPE: "C.UTF-8",
  TERM: "xterm",
  TMPDIR: "/tmp",
  TZ: "America/New_York",
  HTTPS_PROXY: "http://proxy:3128",
  no_proxy: "localhost",
  ANTHROPIC_API_KEY: "sk-ant",
  ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
  ANTHROPIC_AUTH_TOKEN: "gw-token",
  OPENAI_API_KEY: "sk-oai",
  OPENAI_BASE_URL: "http://oai",
  GEMINI_API_KEY: "g",
  AWS_SECRET_ACCESS_KEY: "nope",
  GITHUB_TOKEN: "nope",
  SERVICE_TOKEN: "host-copy-is-not-used",
  PATHEXT: ".COM;.EXE",
  LCX: "not a locale",
};
const SERVICE = {
  serverUrl: "http://127.0.0.1:8052",
  runId: "r1",
  taskId: "t1",
  sessionId: "s1",
};
const BASE = {
  PATH: "/usr/bin",
  HOME: "/home/a",
  USER: "a",
  LANG: "C.UTF-8",
  LC_ALL: "C.UTF-8",
  LC_CTYPE: "C.UTF-8",
  TERM: "xterm",
  TMPDIR: "/tmp",
  TZ: "America/New_York",
  HTTPS_PROXY: "http://proxy:3128",
  no_proxy: "localhost",
  SERVICE_SERVER_URL: "http://127.0.0.1:8052",
  SERVICE_RUN_ID: "r1",
  SERVICE_TASK_ID: "t1",
  SERVICE_SESSION_ID: "s1",
};

const CASES: [string, string, typeof Deno.build.os, string | undefined, Record<string, string>][] =
  [
    ["claude gets its key, endpoint and gateway token only", "claude", "linux", undefined, {
      ...BASE,
      ANTHROPIC_API_KEY: "sk-ant",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:9",
      ANTHROPIC_AUTH_TOKEN: "gw-token",
    }],
    ["codex gets the OpenAI key and endpoint only", "codex", "linux", undefined, {
      ...BASE,
      OPENAI_API_KEY: "sk-oai",
      OPENAI_BASE_URL: "http://oai",
    }],
    ["gemini gets GEMINI_API_KEY and SERVICE_TOKEN when set", "gemini", "linux", "svc", {
      ...BASE,
      GEMINI_API_KEY: "g",
      SERVICE_TOKEN: "svc",
    }],
    ["Windows adds PATHEXT", "gemini", "windows", undefined, {
      ...BASE,
      GEMINI_API_KEY: "g",
      PATHEXT: ".COM;.EXE",
    }],
  ];

for (const [name, adapter, os, token, expected] of CASES) {
  Deno.test(`agentEnvironment(): ${name}`, () => {
    const env = agentEnvironment(adapterByName(adapter), HOST, { ...SERVICE, token }, { os });
    assert.deepEqual(env, expected);
  });
}

Deno.test("agentEnvironment() never forwards unrelated secrets", () => {
  const env = agentEnvironment(adapterByName("claude"), HOST, SERVICE, { os: "linux" });
  for (const k of ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "OPENAI_API_KEY", "LCX", "PATHEXT"]) {
    assert.equal(env[k], undefined, k);
  }
});

Deno.test("agentEnvironment(): leased ports are PORT (the first) and SERVICE_PORTS (all), in place of a forwarded PORT; none without a lease", () => {
  const host = { ...HOST, PORT: "3000" };
  const claude = adapterByName("claude");
  const leased = agentEnvironment(claude, host, { ...SERVICE, ports: [20004, 20005] }, {
    os: "linux",
    extraNames: ["PORT"],
  });
  assert.equal(leased.PORT, "20004");
  assert.equal(leased.SERVICE_PORTS, "20004,20005");
  const none = agentEnvironment(claude, host, SERVICE, { os: "linux" });
  assert.equal(none.PORT, undefined, "the service's own PORT is not the agent's");
  assert.equal(none.SERVICE_PORTS, undefined);
});
