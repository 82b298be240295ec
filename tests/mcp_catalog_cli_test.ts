/**
 * `service mcp catalog` as a user runs it: a fresh process per command, the catalog served by a
 * local HTTP server, a hand-written JSONC mcp.json, the real @modelcontextprotocol/server-memory
 * for the health checks.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { catalogWorkspace as workspace, recordInstall, USER_CONFIG } from "./_mcp_catalog.ts";
import { memoryServerScript } from "../lib/catalog/_test_server.ts";
import { validEntry } from "../lib/catalog/_test_catalog.ts";
import { managedBlock } from "../lib/catalog/managed_config.ts";

/** An entry whose install command prints and succeeds, and whose server is the real memory server. */
function memoryEntry(script: string, over: Record<string, unknown> = {}) {
  return validEntry({
    id: "memory",
    install_command: ["sh", "-c", 'echo "fetching memory (secret=${SECRET_TOKEN:-none})"'],
    command: "node",
    args: [script],
    ...over,
  });
}

Deno.test("mcp catalog: browse, preview, decline, install, health, upgrade, uninstall — the user's bytes stay", async () => {
  const script = await memoryServerScript();
  await using ws = await workspace();
  ws.catalog.entries = [
    memoryEntry(script),
    validEntry({
      id: "sketchy",
      verified_by_service: false,
      install_command: ["sh", "-c", "echo resolving; echo 'E404 no such package' >&2; exit 4"],
      command: "sketchy",
    }),
  ];

  const browse = await ws.run(["browse", "--json"]);
  assert.equal(browse.code, 0, browse.stderr);
  const listed = JSON.parse(browse.stdout);
  assert.deepEqual(listed.entries.map((e: { id: string }) => e.id), ["memory", "sketchy"]);
  assert.equal(listed.how, "downloaded");

  // Declined on stdin: nothing runs, nothing changes.
  const declined = await ws.run(["install", "sketchy"], "n\n");
  assert.equal(declined.code, 1);
  assert.match(declined.stdout, /WARNING: this entry is NOT verified/);
  assert.match(
    declined.stdout,
    /\["sh","-c","echo resolving; echo 'E404 no such package' >&2; exit 4"\]/,
  );
  assert.match(declined.stderr, /declined/);
  assert.equal(await Deno.readTextFile(ws.configPath), USER_CONFIG);

  // Accepted, but the install command fails: its output is shown, the file is untouched.
  const failed = await ws.run(["install", "sketchy"], "yes\n");
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /│ E404 no such package/);
  assert.match(failed.stderr, /install command exited 4 .* was not changed/);
  assert.equal(await Deno.readTextFile(ws.configPath), USER_CONFIG);

  // Installed: the sandbox hides secrets; the health check shakes hands with the real server.
  const installed = await ws.run(["install", "memory", "--yes"]);
  assert.equal(installed.code, 0, installed.stdout + installed.stderr);
  assert.match(installed.stderr, /│ fetching memory \(secret=none\)/);
  assert.match(installed.stdout, /memory: health check ok: memory-server .* answered initialize/);
  const afterInstall = await Deno.readTextFile(ws.configPath);
  assert.ok(afterInstall.startsWith(USER_CONFIG.slice(0, USER_CONFIG.lastIndexOf("}"))));
  const block = managedBlock(afterInstall);
  assert.deepEqual(block.mcpServers.memory, { command: "node", args: [script], env: {} });
  assert.equal(block.installed.memory.version_pin, "1.0.0");

  // A new pin: `upgrade` shows it and leaves it; `upgrade memory --yes` applies it.
  ws.catalog.entries[0] = memoryEntry(script, { version_pin: "1.1.0" });
  const pending = await ws.run(["upgrade", "--refresh", "--json"]);
  assert.equal(pending.code, 0, pending.stderr);
  assert.deepEqual(JSON.parse(pending.stdout).upgrades, [{
    id: "memory",
    from: "1.0.0",
    to: "1.1.0",
    auto_upgrade: false,
    asks: "auto-upgrade was not allowed at install",
    changes: [],
    applied: false,
    failed: false,
    declined: false,
  }]);
  assert.equal(
    managedBlock(await Deno.readTextFile(ws.configPath)).installed.memory.version_pin,
    "1.0.0",
  );
  const applied = await ws.run(["upgrade", "memory", "--yes"]);
  assert.equal(applied.code, 0, applied.stderr);
  assert.match(applied.stdout, /memory: 1\.0\.0 → 1\.1\.0/);
  assert.equal(
    managedBlock(await Deno.readTextFile(ws.configPath)).installed.memory.version_pin,
    "1.1.0",
  );

  // The catalog offering auto_upgrade is not the user's consent: nothing is applied.
  ws.catalog.entries[0] = memoryEntry(script, { version_pin: "1.2.0", auto_upgrade: true });
  const offered = await ws.run(["upgrade", "--refresh"]);
  assert.equal(offered.code, 0, offered.stderr);
  assert.match(offered.stdout, /memory: 1\.1\.0 → 1\.2\.0 \(asks: auto-upgrade was not allowed/);
  assert.equal(
    managedBlock(await Deno.readTextFile(ws.configPath)).installed.memory.version_pin,
    "1.1.0",
  );

  // Installed with --auto-upgrade: a pin-only upgrade is then applied by a plain `upgrade`.
  const consented = await ws.run(["install", "memory", "--yes", "--auto-upgrade"]);
  assert.equal(consented.code, 0, consented.stderr);
  ws.catalog.entries[0] = memoryEntry(script, { version_pin: "1.3.0", auto_upgrade: true });
  const auto = await ws.run(["upgrade", "--refresh"]);
  assert.equal(auto.code, 0, auto.stderr);
  assert.match(auto.stdout, /memory: 1\.2\.0 → 1\.3\.0 \(auto-upgrade: applying\)/);
  const record = managedBlock(await Deno.readTextFile(ws.configPath)).installed.memory;
  assert.equal(record.version_pin, "1.3.0");
  assert.equal(record.auto_upgrade, true);
  assert.deepEqual(record.install_command, memoryEntry(script).install_command);

  const status = await ws.run(["status", "--json"]);
  assert.equal(status.code, 0, status.stderr);
  const servers = JSON.parse(status.stdout).servers;
  assert.equal(servers[0].id, "memory");
  assert.equal(servers[0].ok, true);
  assert.ok(servers[0].tools > 0);

  const list = await ws.run(["list-installed", "--json"]);
  assert.equal(JSON.parse(list.stdout).installed[0].health.ok, true);

  const removed = await ws.run(["uninstall", "memory", "--yes"]);
  assert.equal(removed.code, 0, removed.stderr);
  const afterUninstall = await Deno.readTextFile(ws.configPath);
  assert.deepEqual(managedBlock(afterUninstall), { mcpServers: {}, installed: {} });
  assert.ok(
    afterUninstall.includes(`"mine": { "command": "my-server",   "args": [] }, // hand-formatted`),
  );
  assert.ok(afterUninstall.startsWith("// my own MCP setup\n"));
});

Deno.test("mcp catalog: a rejected catalog exits 1 with every violation; the cached copy stays in use", async () => {
  await using ws = await workspace();
  ws.catalog.entries = [validEntry({ id: "kept" })];
  assert.equal((await ws.run(["browse"])).code, 0);
  ws.catalog.broken = true;
  const rejected = await ws.run(["browse", "--refresh"]);
  assert.equal(rejected.code, 1);
  assert.match(rejected.stderr, /rejected \(\d+ violations\)/);
  assert.match(rejected.stderr, /generated_at: generated_at must be an ISO-8601 UTC date-time/);
  assert.match(rejected.stderr, /entries\[0\]\.id: id must match/);
  assert.match(rejected.stderr, /entries\[0\]\.name: /);
  assert.match(rejected.stderr, /cached copy .* is kept/);
  const json = await ws.run(["browse", "--refresh", "--json"]);
  assert.equal(json.code, 1);
  assert.equal(JSON.parse(json.stdout).error, "catalog_rejected");
  const later = await ws.run(["browse"]);
  assert.equal(later.code, 0, later.stderr);
  assert.match(later.stdout, /^kept /m);
  assert.match(later.stderr, /rejected .* using the cached copy/);
});

Deno.test("mcp catalog: mistakes are named with the fix", async () => {
  await using ws = await workspace();
  ws.catalog.entries = [validEntry({ id: "memory" })];
  const cases: [string[], RegExp][] = [
    [["instal", "memory"], /unknown subcommand "instal" \(did you mean `install`\?\)/],
    [["info", "memroy"], /no catalog entry "memroy".*search/],
    [["uninstall", "memory", "--yes"], /memory is not installed/],
    [["browse", "--all"], /--all goes with `upgrade`/],
    [["search"], /give a word/],
  ];
  for (const [args, pattern] of cases) {
    const r = await ws.run(args);
    assert.equal(r.code, 1, args.join(" "));
    assert.match(r.stderr, pattern);
  }
  const broken = join(ws.home, "broken.json");
  await Deno.writeTextFile(broken, '{ "a": 1 "b": 2 }');
  const r = await ws.run(["list-installed", "--config", broken]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /broken\.json:1:\d+: CommaExpected/);
});

Deno.test("mcp catalog: with a public key the preview says valid, INVALID or unsigned", async () => {
  const { signedBytes } = await import("../lib/catalog/signature.ts");
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const b64 = (b: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(b)));
  const sign = async (e: Record<string, unknown>) =>
    b64(await crypto.subtle.sign("Ed25519", pair.privateKey, signedBytes(e)));
  await using ws = await workspace();
  const good = validEntry({ id: "good", command: "x" });
  const bad = validEntry({ id: "bad", command: "x" });
  ws.catalog.entries = [
    { ...good, signature: await sign(good) },
    { ...bad, signature: await sign(bad), version_pin: "6.6.6" }, // changed after signing
    validEntry({ id: "plain", command: "x" }),
  ];
  const key = b64(await crypto.subtle.exportKey("raw", pair.publicKey));
  await Deno.writeTextFile(
    join(ws.home, "service.yaml"),
    `cli: claude\nroles:\n  backend: {}\nmcp_catalog:\n  url: https://unused.example\n  public_key: "${key}"\n`,
  );
  const expectations: [string, RegExp][] = [
    ["good", /signature: {4}valid \(Ed25519/],
    ["bad", /signature: {4}INVALID/],
    ["plain", /signature: {4}none \(the entry is not signed\)/],
  ];
  for (const [id, pattern] of expectations) {
    const r = await ws.run(["info", id]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, pattern);
  }
  const json = await ws.run(["info", "bad", "--json"]);
  assert.equal(JSON.parse(json.stdout).signature, "invalid");
});

Deno.test({
  name: "mcp catalog: a real npm install command, then npx starts the server for the handshake",
  async fn() {
    const { MEMORY_PACKAGE } = await import("../lib/catalog/_test_server.ts");
    await using ws = await workspace();
    ws.catalog.entries = [validEntry({
      id: "memory",
      install_command: ["npm", "cache", "add", MEMORY_PACKAGE],
      command: "npx",
      args: ["-y", "--prefer-offline", MEMORY_PACKAGE],
    })];
    const r = await ws.run(["install", "memory", "--yes"]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stderr,
      /installing memory 1\.0\.0: npm cache add @modelcontextprotocol\/server-memory@/,
    );
    assert.match(r.stdout, /memory: health check ok: memory-server/);
    const status = await ws.run(["status"]);
    assert.equal(status.code, 0, status.stdout + status.stderr);
    assert.match(status.stdout, /^memory\s+ok\s+memory-server/m);
  },
});

Deno.test("mcp catalog: `upgrade --all` applies the upgrades you allowed without asking, and asks for each other one", async () => {
  await using ws = await workspace();
  const entry = (id: string, pin: string) =>
    validEntry({
      id,
      version_pin: pin,
      auto_upgrade: true,
      install_command: ["sh", "-c", `echo installing ${id}`],
      transports: ["http"], // no health check: the exit code is the upgrades' alone
      command: "remote-proxy",
    });
  // Installed earlier: "quiet" with --auto-upgrade, "loud" without it.
  await recordInstall(ws, entry("quiet", "1.0.0"), { auto_upgrade: true });
  await recordInstall(ws, entry("loud", "1.0.0"));
  await recordInstall(ws, entry("other", "1.0.0"));
  ws.catalog.entries = [entry("quiet", "1.1.0"), entry("loud", "1.1.0"), entry("other", "1.1.0")];
  const r = await ws.run(["upgrade", "--all"], "n\ny\n");
  assert.equal(r.code, 1, "a declined upgrade is exit 1");
  assert.match(r.stdout, /quiet: 1\.0\.0 → 1\.1\.0 \(auto-upgrade: applying\)/);
  assert.match(
    r.stdout,
    /loud: 1\.0\.0 → 1\.1\.0 \(asks: auto-upgrade was not allowed at install\)/,
  );
  assert.match(r.stderr, /installing quiet 1\.1\.0/);
  assert.match(r.stderr, /upgrade loud to 1\.1\.0\? \[y\/N\] n/);
  assert.match(r.stderr, /upgrade other to 1\.1\.0\? \[y\/N\] y/);
  const after = managedBlock(await Deno.readTextFile(ws.configPath)).installed;
  assert.equal(after.quiet.version_pin, "1.1.0", "the allowed pin-only upgrade was applied");
  assert.equal(after.loud.version_pin, "1.0.0", "the declined one stays");
  assert.equal(after.other.version_pin, "1.1.0", "the accepted one was applied");
  assert.equal(after.other.auto_upgrade, false, "accepting an upgrade is not auto-upgrade consent");
});
