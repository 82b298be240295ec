import assert from "node:assert/strict";
import { mcpDelivery, mergeMcpServers } from "./run_servers.ts";
import { parseConfig } from "../config/load.ts";
import { claudeAdapter } from "../agents/adapters/claude.ts";

Deno.test("run MCP servers: an installed entry's ${VAR} resolve only when allowed at install; service.yaml's always", () => {
  const env: Record<string, string> = { GITHUB_TOKEN: "ghp_x", ANTHROPIC_API_KEY: "sk-secret" };
  const config = parseConfig(
    'cli: claude\nroles:\n  backend: {}\nmcp_servers:\n  mine: { command: m, env: { K: "${ANTHROPIC_API_KEY}" } }\n',
  );
  const record = {
    version_pin: "1",
    installed_at: "2026-11-01T00:00:00Z",
    verified_by_service: true,
    auto_upgrade: false,
  };
  const run = mergeMcpServers(config, {
    block: {
      mcpServers: {
        gh: {
          command: "gh-mcp",
          args: [],
          env: { T: "${GITHUB_TOKEN}", A: "${ANTHROPIC_API_KEY}" },
        },
        old: { command: "o", args: ["${GITHUB_TOKEN}"], env: {} },
      },
      installed: { gh: { ...record, allowed_env: ["GITHUB_TOKEN"] }, old: record },
    },
    env: (n) => env[n],
    installedFile: "mcp.json",
  });
  assert.deepEqual(run.servers.gh, {
    command: "gh-mcp",
    args: [],
    env: { T: "ghp_x", A: "${ANTHROPIC_API_KEY}" },
  });
  assert.deepEqual(
    run.servers.old.args,
    ["${GITHUB_TOKEN}"],
    "a record without allowed_env allows none",
  );
  assert.deepEqual(run.servers.mine, { command: "m", env: { K: "sk-secret" } });
  assert.deepEqual(run.asWritten, { gh: ["ANTHROPIC_API_KEY"], old: ["GITHUB_TOKEN"] });
  assert.match(
    mcpDelivery(claudeAdapter, run)!,
    /gh gets \$\{ANTHROPIC_API_KEY\} as written \(not allowed at install: `service mcp catalog install gh` again to allow\)/,
  );
});
