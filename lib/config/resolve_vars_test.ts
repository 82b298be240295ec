import assert from "node:assert/strict";
import {
  McpVariableError,
  referencedNames,
  resolveAllowedVars,
  resolveVars,
} from "./resolve_vars.ts";

Deno.test("resolveVars: nested values resolve; unset ones name the variable and the key", () => {
  const env: Record<string, string> = { TOKEN: "t0k", HOME: "/home/u" };
  const servers = {
    github: { command: "gh-mcp", args: ["--root", "${HOME}/src"], env: { TOKEN: "${TOKEN}" } },
  };
  assert.deepEqual(
    resolveVars(servers, { env: (n) => env[n], prefix: ["mcp_servers"], file: "service.yaml" }),
    {
      github: { command: "gh-mcp", args: ["--root", "/home/u/src"], env: { TOKEN: "t0k" } },
    },
  );
  assert.throws(
    () =>
      resolveVars(
        { db: { env: { URL: "${DB_URL}" }, args: ["${DB_URL}", "${X}"] } },
        { env: (n) => env[n], prefix: ["mcp_servers"], file: "service.yaml" },
      ),
    (e: unknown) => {
      assert.ok(e instanceof McpVariableError);
      assert.match(e.message, /mcp_servers\.db\.env\.URL references \$\{DB_URL\}/);
      assert.match(e.message, /mcp_servers\.db\.args\[1\] references \$\{X\}/);
      assert.match(e.message, /^service\.yaml: /);
      assert.match(e.fix, /export DB_URL=/);
      assert.deepEqual(e.names, ["DB_URL", "X"]);
      return true;
    },
  );
});

Deno.test("resolveAllowedVars: only allowed names are looked up; the rest stay as written", () => {
  const env: Record<string, string> = { GITHUB_TOKEN: "ghp_x", ANTHROPIC_API_KEY: "sk-secret" };
  const looked: string[] = [];
  const server = {
    command: "srv",
    args: ["${GITHUB_TOKEN}"],
    env: { A: "${ANTHROPIC_API_KEY}", G: "token ${GITHUB_TOKEN}" },
  };
  const out = resolveAllowedVars(server, ["GITHUB_TOKEN"], {
    env: (n) => {
      looked.push(n);
      return env[n];
    },
    prefix: ["service-managed", "mcpServers", "x"],
    file: "mcp.json",
  });
  assert.deepEqual(out, {
    command: "srv",
    args: ["ghp_x"],
    env: { A: "${ANTHROPIC_API_KEY}", G: "token ghp_x" },
  });
  assert.deepEqual([...new Set(looked)], ["GITHUB_TOKEN"]);
  assert.deepEqual(referencedNames(server), ["ANTHROPIC_API_KEY", "GITHUB_TOKEN"]);
  assert.throws(
    () =>
      resolveAllowedVars(server, ["GITHUB_TOKEN"], { env: () => undefined, prefix: [], file: "f" }),
    /references \$\{GITHUB_TOKEN\}, which is not set/,
  );
});
