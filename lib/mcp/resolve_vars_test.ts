import assert from "node:assert/strict";
import { McpVariableError, resolveVars } from "./resolve_vars.ts";

Deno.test("resolveVars: nested values resolve; unset ones name the variable and the key", () => {
  const env: Record<string, string> = { TOKEN: "t0k", HOME: "/home/u" };
  const servers = {
    github: { command: "gh-mcp", args: ["--root", "${HOME}/src"], env: { TOKEN: "${TOKEN}" } },
  };
  assert.deepEqual(resolveVars(servers, (n) => env[n], ["mcp_servers"], "service.yaml"), {
    github: { command: "gh-mcp", args: ["--root", "/home/u/src"], env: { TOKEN: "t0k" } },
  });
  assert.throws(
    () =>
      resolveVars(
        { db: { env: { URL: "${DB_URL}" }, args: ["${DB_URL}", "${X}"] } },
        (n) => env[n],
        ["mcp_servers"],
        "service.yaml",
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
