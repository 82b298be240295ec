/**
 * MCP servers reach the agent: the run's configuration (an installed catalog entry plus a
 * service.yaml `mcp_servers` override with a `${VAR}`) is written by lib/mcp/run_servers.ts and
 * handed to the REAL Claude Code with the claude adapter's `--mcp-config`; Claude Code starts
 * the real @modelcontextprotocol/server-memory twice and offers both servers' tools to the model
 * (seen by tests/fakes/anthropic_api.ts). Skipped only when `claude` is not on PATH.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { startFakeAnthropicApi } from "./fakes/anthropic_api.ts";
import { claudeAdapter } from "../lib/agents/adapters/claude.ts";
import { resolveBinary } from "../lib/agents/preflight.ts";
import { agentEnvironment } from "../lib/agents/env.ts";
import { mcpSessionEnv, mergeMcpServers, writeRunMcpConfig } from "../lib/mcp/run_servers.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { parseConfig } from "../lib/config/load.ts";
import { memoryServerScript } from "../lib/catalog/_test_server.ts";

/** The test's HOME is a temp dir: keep Deno's cache where it is. */
const DENO_DIR = Deno.env.get("DENO_DIR") ??
  join(Deno.env.get("HOME") ?? "/root", ".cache", "deno");

const claudePath = await resolveBinary("claude", Deno.env.toObject());
if (!claudePath) console.warn("SKIP mcp_servers_claude_real_test: `claude` not found in PATH");

Deno.test({
  name:
    "real Claude Code receives the run's MCP servers through --mcp-config and offers their tools",
  ignore: !claudePath,
  async fn() {
    const script = await memoryServerScript();
    await using api = startFakeAnthropicApi({ text: "done" });
    const dir = await Deno.makeTempDir({ prefix: "claude-mcp-" });
    try {
      const config = parseConfig(`cli: claude
roles:
  backend: {}
mcp_servers:
  notes:
    command: node
    args: ["${script}"]
    env:
      MEMORY_FILE_PATH: "\${NOTES_DIR}/notes.jsonl"
`);
      const run = mergeMcpServers(config, {
        block: {
          mcpServers: {
            memory: {
              command: "node",
              args: [script],
              env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
            },
          },
          installed: {},
        },
        env: (n) => ({ NOTES_DIR: dir } as Record<string, string>)[n],
        installedFile: "mcp.json",
      });
      const paths = workspacePaths(dir);
      const file = await writeRunMcpConfig(paths, "run-1", claudeAdapter, run);
      assert.ok(file, "claude accepts a runtime MCP configuration");
      assert.equal((await Deno.stat(file)).mode! & 0o777, 0o600);
      const written = JSON.parse(await Deno.readTextFile(file));
      assert.deepEqual(Object.keys(written.mcpServers).sort(), ["memory", "notes"]);
      assert.equal(written.mcpServers.notes.env.MEMORY_FILE_PATH, `${dir}/notes.jsonl`);

      const argv = claudeAdapter.buildArgv({
        prompt: "Say done.",
        workdir: dir,
        mcpConfigPath: file,
      });
      assert.deepEqual(argv.slice(argv.indexOf("--mcp-config"), argv.indexOf("--mcp-config") + 2), [
        "--mcp-config",
        file,
      ]);
      const env = {
        ...agentEnvironment(claudeAdapter, {
          PATH: Deno.env.get("PATH") ?? "",
          HOME: dir,
          LANG: "C.UTF-8",
          ANTHROPIC_BASE_URL: api.url,
          ANTHROPIC_API_KEY: "test-key",
          CLAUDE_CODE_MAX_RETRIES: "0",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
          DISABLE_TELEMETRY: "1",
        }, { serverUrl: "http://127.0.0.1:1", runId: "run-1", taskId: "t1", sessionId: "s1" }),
        // What the orchestrator adds to a session given --mcp-config: Claude Code waits for the
        // servers before its first turn.
        ...mcpSessionEnv(claudeAdapter, file),
      };
      assert.equal(env.MCP_CONNECTION_NONBLOCKING, "false");
      const out = await new Deno.Command(claudePath!, {
        args: argv,
        cwd: dir,
        clearEnv: true,
        env,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).output();
      const dec = new TextDecoder();
      const log = dec.decode(out.stdout) + dec.decode(out.stderr);
      assert.equal(out.code, 0, log);
      // Claude Code's init line lists the MCP servers it connected to.
      const init = log.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
        .find((m) => m.type === "system" && m.subtype === "init");
      assert.ok(init, log);
      const servers = Object.fromEntries(
        (init.mcp_servers as { name: string; status: string }[]).map((s) => [s.name, s.status]),
      );
      assert.deepEqual(servers, { memory: "connected", notes: "connected" });
      // And the model is offered both servers' tools.
      const call = api.requests.find((r) =>
        r.path === "/v1/messages" &&
        ((r.body as { tools?: unknown[] }).tools ?? []).length > 0
      );
      assert.ok(call, "a messages call carried tools");
      const names = (call.body as { tools: { name: string }[] }).tools.map((t) => t.name);
      assert.ok(names.includes("mcp__memory__create_entities"), names.join(", "));
      assert.ok(names.includes("mcp__notes__create_entities"), names.join(", "));
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test("run MCP servers: service.yaml overrides an installed entry of the same name; adapters without the flag get no file", async () => {
  const config = parseConfig(
    "cli: codex\nroles:\n  backend: {}\nmcp_servers:\n  memory: { command: mine }\n",
  );
  const run = mergeMcpServers(config, {
    block: {
      mcpServers: { memory: { command: "npx" }, other: { command: "x" } } as never,
      installed: {},
    },
    env: () => undefined,
    installedFile: "mcp.json",
  });
  assert.deepEqual(run.servers, { memory: { command: "mine" }, other: { command: "x" } });
  assert.deepEqual(run.origin, { memory: "service.yaml", other: "installed" });
  const dir = await Deno.makeTempDir();
  const { adapterByName } = await import("../lib/agents/adapters/mod.ts");
  assert.equal(
    await writeRunMcpConfig(workspacePaths(dir), "r", adapterByName("codex"), run),
    undefined,
  );
  await Deno.remove(dir, { recursive: true });
});

Deno.test("service run / doctor / agents: an unset ${VAR} in mcp_servers names the key; codex is told it gets no servers", async () => {
  const { CLI, runDeno } = await import("./helpers.ts");
  const dir = await Deno.makeTempDir();
  const git = (...args: string[]) => new Deno.Command("git", { args, cwd: dir }).output();
  await git("init", "-q", "-b", "main");
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    "cli: claude\nroles:\n  backend: {}\nmcp_servers:\n  db:\n    command: db-mcp\n    env: { URL: '${DB_URL}' }\n",
  );
  await Deno.writeTextFile(
    join(dir, "plan.yaml"),
    "stages:\n  - name: s\n    steps:\n      - goal: do it\n        role: backend\n",
  );
  await git("-c", "user.email=t@l", "-c", "user.name=t", "add", "-A");
  await git("-c", "user.email=t@l", "-c", "user.name=t", "commit", "-q", "-m", "init");
  const env = { HOME: dir, ANTHROPIC_API_KEY: "k", DENO_DIR };
  try {
    const run = await runDeno(["run", "-A", CLI, "--root", dir, "run", "--port", "0"], {
      clearEnv: true,
      env,
    });
    assert.equal(run.code, 1, run.text);
    assert.match(run.text, /mcp_servers\.db\.env\.URL references \$\{DB_URL\}, which is not set/);
    assert.match(run.text, /fix: export DB_URL=/);
    await assert.rejects(() => Deno.stat(join(dir, ".sdd", "runs")), Deno.errors.NotFound);

    const doctor = await runDeno(["run", "-A", CLI, "--root", dir, "doctor"], {
      clearEnv: true,
      env,
    });
    assert.match(doctor.text, /FAIL\s+mcp servers: service\.yaml: mcp_servers\.db\.env\.URL/);

    await Deno.writeTextFile(
      join(dir, "service.yaml"),
      "cli: codex\nroles:\n  backend: {}\nmcp_servers:\n  db: { command: db-mcp }\n",
    );
    const agents = await runDeno(["run", "-A", CLI, "--root", dir, "agents"], {
      clearEnv: true,
      env,
    });
    assert.match(
      agents.text,
      /1 MCP server \(db\) configured, but codex takes no runtime MCP configuration/,
    );
    const doctor2 = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", dir, "doctor", "--json"],
      clearEnv: true,
      env: { PATH: Deno.env.get("PATH") ?? "", ...env },
      stdout: "piped",
      stderr: "null",
    }).output();
    const checks = JSON.parse(new TextDecoder().decode(doctor2.stdout)).checks as {
      name: string;
      warning?: boolean;
      detail: string;
    }[];
    const check = checks.find((c) => c.name === "mcp servers")!;
    assert.equal(check.warning, true);
    assert.match(check.detail, /codex takes no runtime MCP configuration/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("service run writes the run's MCP configuration and every claude agent gets --mcp-config", async () => {
  const { CLI, runDeno } = await import("./helpers.ts");
  const dir = await Deno.makeTempDir({ prefix: "mcp-run-" });
  const repo = join(dir, "repo");
  const stub = join(dir, "bin");
  const seen = join(dir, "seen");
  await Deno.mkdir(repo);
  await Deno.mkdir(stub);
  await Deno.mkdir(seen);
  // Stands in for `claude` on PATH: keeps the --mcp-config file it was given, then reports.
  await Deno.writeTextFile(
    join(stub, "claude"),
    `#!/bin/sh
prev=""
for a in "$@"; do
  if [ "$prev" = "--mcp-config" ]; then cp "$a" "$STUB_OUT/$SERVICE_SESSION_ID.json"; fi
  prev="$a"
done
echo "$MCP_CONNECTION_NONBLOCKING" > "$STUB_OUT/$SERVICE_SESSION_ID.env"
echo '{"type":"result","subtype":"success","total_cost_usd":0,"usage":{}}'
curl -s -X POST -H "Authorization: Bearer $SERVICE_TOKEN" -H "content-type: application/json" -d '{"summary":"stub"}' \\
  "$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/complete" >/dev/null
`,
    { mode: 0o755 },
  );
  const git = (...args: string[]) =>
    new Deno.Command("git", {
      args: ["-c", "user.email=t@l", "-c", "user.name=t", ...args],
      cwd: repo,
    })
      .output();
  await git("init", "-q", "-b", "main");
  await Deno.writeTextFile(
    join(repo, "service.yaml"),
    "cli: claude\nroles:\n  backend: {}\nagent_env: [STUB_OUT]\nmcp_servers:\n  notes:\n" +
      "    command: node\n    args: [server.js]\n    env: { TOKEN: '${NOTES_TOKEN}' }\n",
  );
  await Deno.writeTextFile(
    join(repo, "plan.yaml"),
    "stages:\n  - name: s\n    steps:\n      - goal: one\n        role: backend\n      - goal: two\n        role: backend\n",
  );
  await git("add", "-A");
  await git("commit", "-q", "-m", "init");
  // One server installed from the catalog, in the user's mcp.json.
  await Deno.mkdir(join(dir, ".config", "service"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, ".config", "service", "mcp.json"),
    JSON.stringify({
      "service-managed": {
        mcpServers: { memory: { command: "npx", args: ["-y", "m"], env: {} } },
        installed: {},
      },
    }),
  );
  try {
    const run = await runDeno(["run", "-A", CLI, "--root", repo, "run", "--port", "0"], {
      clearEnv: true,
      env: {
        PATH: `${stub}:${Deno.env.get("PATH")}`,
        HOME: dir,
        DENO_DIR,
        ANTHROPIC_API_KEY: "k",
        STUB_OUT: seen,
        NOTES_TOKEN: "t0k",
      },
    });
    assert.equal(run.code, 0, run.text);
    assert.match(
      run.text,
      /2 MCP servers \(memory, notes\) passed to claude agents with --mcp-config/,
    );
    const files = [...Deno.readDirSync(seen)].map((e) => e.name).filter((f) => f.endsWith(".json"));
    assert.equal(files.length, 2, "both agents received --mcp-config");
    for (const f of files) {
      const waits = await Deno.readTextFile(join(seen, f.replace(/\.json$/, ".env")));
      assert.equal(
        waits.trim(),
        "false",
        "MCP_CONNECTION_NONBLOCKING=false: Claude Code waits for the servers",
      );
    }
    for (const f of files) {
      const config = JSON.parse(await Deno.readTextFile(join(seen, f)));
      assert.deepEqual(config.mcpServers, {
        memory: { command: "npx", args: ["-y", "m"], env: {} },
        notes: { command: "node", args: ["server.js"], env: { TOKEN: "t0k" } },
      });
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
