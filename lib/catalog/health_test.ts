import assert from "node:assert/strict";
import { join } from "node:path";
import { checkServerHealth, readHealth, recordHealth } from "./health.ts";
import { memoryServerScript } from "./_test_server.ts";

const env = Deno.env.toObject();

Deno.test("health: a real MCP initialize handshake with @modelcontextprotocol/server-memory", async () => {
  const script = await memoryServerScript();
  const dir = await Deno.makeTempDir();
  const outcome = await checkServerHealth(
    { command: "node", args: [script], env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") } },
    { processEnv: env, cwd: dir },
  );
  assert.ok(outcome.ok, outcome.error ?? "");
  assert.match(outcome.server!.name, /memory/);
  assert.match(outcome.protocol_version!, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(outcome.tools! >= 5, `the memory server lists its tools (${outcome.tools})`);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("health: failures say why — missing program, a server that exits, one that never answers", async () => {
  const missing = await checkServerHealth(
    { command: "no-such-mcp-server-xyz", args: [], env: {} },
    { processEnv: env },
  );
  assert.equal(missing.ok, false);
  assert.match(missing.error!, /command not found|ENOENT/);

  const exits = await checkServerHealth(
    { command: "sh", args: ["-c", "echo cannot start: bad token >&2; exit 2"], env: {} },
    { processEnv: env, timeoutMs: 5000 },
  );
  assert.equal(exits.ok, false);
  assert.match(exits.error!, /cannot start: bad token/);

  const started = performance.now();
  const silent = await checkServerHealth(
    { command: "sleep", args: ["30"], env: {} },
    { processEnv: env, timeoutMs: 500 },
  );
  assert.equal(silent.ok, false);
  assert.match(silent.error!, /within|timed out/i);
  assert.ok(performance.now() - started < 5000);
});

Deno.test("health: outcomes are recorded per id and can be forgotten", async () => {
  const dir = await Deno.makeTempDir();
  const o = { ok: true, checked_at: "t", duration_ms: 1 };
  await recordHealth(dir, { a: o, b: { ...o, ok: false } });
  await recordHealth(dir, { b: null });
  assert.deepEqual(await readHealth(dir), { a: o });
  await Deno.remove(dir, { recursive: true });
});
