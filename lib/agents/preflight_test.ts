import assert from "node:assert/strict";
import { join } from "node:path";
import { missingApiKey, preflight } from "./preflight.ts";
import { adapterByName } from "./adapters/mod.ts";
import { RuntimeError } from "./errors.ts";
import type { AgentAdapter } from "./adapters/types.ts";

const KEY_CASES: [string, string, Record<string, string>, string | undefined][] = [
  ["claude with ANTHROPIC_API_KEY", "claude", { ANTHROPIC_API_KEY: "k" }, undefined],
  ["claude with an OAuth token", "claude", { CLAUDE_CODE_OAUTH_TOKEN: "t" }, undefined],
  ["claude behind a gateway with an auth token", "claude", {
    ANTHROPIC_BASE_URL: "http://127.0.0.1:4000",
    ANTHROPIC_AUTH_TOKEN: "t",
  }, undefined],
  [
    "claude with an auth token but no gateway",
    "claude",
    { ANTHROPIC_AUTH_TOKEN: "t" },
    "API key not set: ANTHROPIC_API_KEY (set it for the claude adapter)",
  ],
  [
    "claude with an empty key",
    "claude",
    { ANTHROPIC_API_KEY: "" },
    "API key not set: ANTHROPIC_API_KEY (set it for the claude adapter)",
  ],
  ["gemini with GOOGLE_API_KEY", "gemini", { GOOGLE_API_KEY: "g" }, undefined],
  [
    "codex without a key",
    "codex",
    { ANTHROPIC_API_KEY: "k" },
    "API key not set: OPENAI_API_KEY (set it for the codex adapter)",
  ],
];

for (const [name, adapter, env, expected] of KEY_CASES) {
  Deno.test(`missingApiKey(): ${name}`, () => {
    assert.equal(missingApiKey(adapterByName(adapter), env), expected);
  });
}

function fake(binary: string, apiKeyEnv: string[] = []): AgentAdapter {
  return {
    name: "fake",
    binary,
    apiKeyEnv,
    passEnv: [],
    acceptsMcpConfig: false,
    supportsEffort: false,
    buildArgv: () => [],
    parseUsage: () => undefined,
  };
}

async function withBin<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(join(dir, "agent-ok"), "#!/bin/sh\n", { mode: 0o755 });
    await Deno.writeTextFile(join(dir, "agent-noexec"), "#!/bin/sh\n", { mode: 0o644 });
    return await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("preflight() resolves the binary by a PATH lookup", async () => {
  await withBin(async (dir) => {
    const r = await preflight(fake("agent-ok"), {
      env: { PATH: `/nonexistent:${dir}` },
      os: "linux",
    });
    assert.equal(r.binaryPath, join(dir, "agent-ok"));
    assert.deepEqual(r.launch, { command: join(dir, "agent-ok"), prefixArgs: [] });
  });
});

Deno.test("preflight() reports a missing binary as RuntimeError with exit 127", async () => {
  await withBin(async (dir) => {
    await assert.rejects(preflight(fake("no-such-agent"), { env: { PATH: dir } }), (e) => {
      assert.ok(e instanceof RuntimeError);
      assert.equal(String(e), "RuntimeError: binary not found in PATH: no-such-agent");
      assert.equal(e.exitCode, 127);
      assert.match(e.fix, /install|PATH/);
      return true;
    });
  });
});

Deno.test("preflight() reports a non-executable binary as Permission denied (126)", async () => {
  await withBin(async (dir) => {
    await assert.rejects(preflight(fake("agent-noexec"), { env: { PATH: dir } }), (e) => {
      assert.ok(e instanceof RuntimeError);
      assert.equal(e.message, `Permission denied: ${join(dir, "agent-noexec")}`);
      assert.equal(e.exitCode, 126);
      return true;
    });
  });
});

Deno.test("preflight() warns and refuses when the API key is not set", async () => {
  await withBin(async (dir) => {
    const warnings: string[] = [];
    await assert.rejects(
      preflight(fake("agent-ok", ["FAKE_KEY"]), {
        env: { PATH: dir },
        warn: (w) => warnings.push(w),
      }),
      (e) => e instanceof RuntimeError && e.exitCode === 1,
    );
    assert.deepEqual(warnings, ["API key not set: FAKE_KEY (set it for the fake adapter)"]);
  });
});

Deno.test("preflight() refuses a missing work directory as Permission denied", async () => {
  await withBin(async (dir) => {
    await assert.rejects(
      preflight(fake("agent-ok"), { env: { PATH: dir }, workdir: join(dir, "gone") }),
      (e) => e instanceof RuntimeError && e.message.startsWith("Permission denied:"),
    );
  });
});

Deno.test("preflight() launches a Windows batch shim through cmd.exe", async () => {
  await withBin(async (dir) => {
    await Deno.writeTextFile(join(dir, "agent.CMD"), "@echo off\n");
    const r = await preflight(fake("agent"), {
      env: { PATH: dir, PATHEXT: ".EXE;.CMD" },
      os: "windows",
    });
    assert.equal(r.binaryPath, join(dir, "agent") + ".CMD");
    assert.deepEqual(r.launch.prefixArgs, ["/d", "/s", "/c", r.binaryPath]);
  });
});

Deno.test("preflight() refuses a CLI that could not start headless, naming the fix", async () => {
  await withBin(async (dir) => {
    const adapter = {
      ...fake("agent-ok", ["FAKE_KEY"]),
      headlessProblem: (env: Readonly<Record<string, string>>) =>
        env.FAKE_URL === "bad"
          ? { problem: "FAKE_URL is not a URL", fix: "set FAKE_URL" }
          : undefined,
    };
    await assert.rejects(
      preflight(adapter, { env: { PATH: dir, FAKE_KEY: "k", FAKE_URL: "bad" } }),
      (e) => {
        assert.ok(e instanceof RuntimeError);
        assert.equal(e.message, "fake cannot start headless: FAKE_URL is not a URL");
        assert.equal(e.fix, "set FAKE_URL");
        assert.equal(e.exitCode, 1);
        return true;
      },
    );
    await preflight(adapter, { env: { PATH: dir, FAKE_KEY: "k" } });
  });
});
