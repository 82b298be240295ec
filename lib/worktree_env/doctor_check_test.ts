import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { parseConfig } from "../config/load.ts";
import { worktreeEnvChecks } from "./doctor_check.ts";

Deno.test("doctor shows the environment each role's worktrees get; a missing symlink source fails, an empty copy pattern, a program not on PATH and a small port range warn", async () => {
  await using repo = await tempRepo({ "README.md": "hi\n", ".gitignore": ".env\n" });
  await repo.write(".env", "A=1\n");
  await repo.write(".worktreeinclude", "# shared with Claude Code\n.env\n");
  const config = parseConfig(
    `cli: claude
max_agents: 5
worktree:
  copy: [".env", "config/*.local.json"]
  setup: ["npm ci", "no-such-tool-xyz --init"]
  ports: 2
  port_range: [20000, 20005]
roles:
  backend: {}
  web:
    worktree:
      symlink: [node_modules]
`,
    "s.yaml",
  );
  const checks = await worktreeEnvChecks(repo.root, config, join(repo.root, ".sdd/runtime/ports"));
  assert.deepEqual(checks.map((c) => [c.name, c.ok, c.warning ?? false]), [
    ["worktree environment (with .worktreeinclude)", true, true],
    ["worktree environment of role web", false, false],
  ]);
  const [top, web] = checks;
  assert.match(top.detail, /^copies \.env \(1 file\(s\)\); links nothing; setup: npm ci && /);
  assert.match(top.detail, /ports: 2 of \[20000, 20005\]; build caches ignored/);
  assert.match(top.detail, /copy pattern\(s\) matching no untracked file: config\/\*\.local\.json/);
  assert.match(top.detail, /not on PATH: no-such-tool-xyz/);
  assert.match(top.detail, /port_range holds 6 port\(s\), fewer than ports × max_agents = 10/);
  assert.match(web.detail, /symlink source\(s\) missing in the checkout: node_modules/);
  assert.match(web.fix ?? "", /npm ci/);
});

Deno.test("doctor lists the port leases and says which a killed orchestrator left; nothing at all without configuration or leases", async () => {
  await using repo = await tempRepo();
  const config = parseConfig("cli: claude\nroles: [backend]\n", "s.yaml");
  const ports = join(repo.root, ".sdd/runtime/ports");
  assert.deepEqual(await worktreeEnvChecks(repo.root, config, ports), []);
  await Deno.mkdir(ports, { recursive: true });
  const lease = (port: number, session: string, pid: number) =>
    Deno.writeTextFile(
      join(ports, `${port}.json`),
      JSON.stringify({ port, session_id: session, pid, leased_at: "2026-01-01T00:00:00Z" }),
    );
  await lease(20000, "s-live", Deno.pid);
  const gone = new Deno.Command("true").spawn();
  await gone.status;
  await lease(20001, "s-dead", gone.pid);
  const [check] = await worktreeEnvChecks(repo.root, config, ports);
  assert.equal(check.name, "port leases");
  assert.equal(check.warning, true);
  assert.equal(
    check.detail,
    "leased to live sessions: 20000 (s-live); left by an orchestrator that is gone: 20001 (s-dead)",
  );
  assert.match(check.fix ?? "", /the next `service run` takes them back/);
});
