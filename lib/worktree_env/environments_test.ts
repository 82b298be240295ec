import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { parseConfig } from "../config/load.ts";
import { createWorktree } from "../worktrees/worktrees.ts";
import { WorktreeEnvironments, WorktreeSetupError } from "./environments.ts";

const ENV = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: "/nonexistent" };

async function fixture(worktreeYaml: string) {
  const repo = await tempRepo({ "README.md": "hi\n", ".gitignore": ".env\nnode_modules/\n" });
  await repo.write(".env", "API_KEY=from-the-checkout\n");
  await repo.write("node_modules/left-pad/index.js", "module.exports = 1;\n");
  const config = parseConfig(`cli: claude\nroles: [backend]\nworktree:\n${worktreeYaml}`, "s.yaml");
  const environments = new WorktreeEnvironments({
    root: repo.root,
    config,
    portsDir: join(repo.root, ".sdd/runtime/ports"),
    lease: { isFree: () => true },
  });
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  const logPath = join(repo.root, ".sdd/runtime/s1.log");
  await Deno.mkdir(join(logPath, ".."), { recursive: true });
  return { repo, environments, wt, logPath };
}

Deno.test("prepare(): copies, links, ports, then setup with the agent's environment and the ports, each command under a header in the session log", async () => {
  const f = await fixture(
    "  copy: ['.env']\n  symlink: ['node_modules']\n  ports: 2\n  port_range: [21000, 21009]\n" +
      "  setup: ['echo \"port=$PORT all=$SERVICE_PORTS home=$HOME\" > setup.out', 'cat .env']\n",
  );
  await using _repo = f.repo;
  const ports = await f.environments.leasePorts("s1", "backend");
  assert.deepEqual(ports, [21000, 21001]);
  const env = { ...ENV, PORT: "21000", SERVICE_PORTS: "21000,21001" };
  const p = await f.environments.prepare({
    tree: f.wt.path,
    sessionId: "s1",
    role: "backend",
    env,
    ports,
    logPath: f.logPath,
  });
  assert.deepEqual(p.copied, [".env"]);
  assert.deepEqual(p.linked, ["node_modules"]);
  assert.deepEqual(p.setup.map((s) => [s.command.slice(0, 4), s.exit_code]), [["echo", 0], [
    "cat ",
    0,
  ]]);
  assert.equal(
    await f.repo.read("setup.out", f.wt.path),
    "port=21000 all=21000,21001 home=/nonexistent\n",
  );
  const log = await Deno.readTextFile(f.logPath);
  assert.match(log, /worktree environment: copied 1 file\(s\) \(\.env\); linked node_modules/);
  assert.match(log, /──── service: worktree setup 2\/2: cat \.env\nAPI_KEY=from-the-checkout\n/);
  assert.match(log, /worktree setup 2\/2 passed: exit 0/);
  // Nothing of the environment is staged: not the copy, not the link, not what setup wrote...
  assert.equal(await f.repo.git(["status", "--porcelain"], f.wt.path), "?? setup.out");
});

Deno.test("prepare(): a failing setup is setup_failed: <command>: <last error line>; the commands after it do not run", async () => {
  const f = await fixture(
    "  setup:\n    - echo installing\n" +
      `    - "echo 'npm ERR! code E404' >&2; echo 'npm ERR! 404 Not Found: left-pad@9' >&2; exit 1"\n` +
      "    - touch never-ran\n",
  );
  await using _repo = f.repo;
  const err = await f.environments.prepare({
    tree: f.wt.path,
    sessionId: "s1",
    role: "backend",
    env: ENV,
    ports: [],
    logPath: f.logPath,
  }).then(() => undefined, (e) => e);
  assert.ok(err instanceof WorktreeSetupError);
  assert.equal(
    err.reason,
    "setup_failed: echo 'npm ERR! code E404' >&2; echo 'npm ERR! 404 Not Found: left-pad@9' >&2; " +
      "exit 1: npm ERR! 404 Not Found: left-pad@9",
  );
  assert.deepEqual(err.prepared.setup.map((s) => s.exit_code), [0, 1]);
  assert.equal(await Deno.stat(join(f.wt.path, "never-ran")).catch(() => "absent"), "absent");
  assert.match(await Deno.readTextFile(f.logPath), /worktree setup 2\/3 FAILED: exit 1/);
});

Deno.test("prepare(): a setup past setup_timeout_s ends whole (its children too) and says it timed out", async () => {
  const f = await fixture("  setup_timeout_s: 1\n  setup: ['sleep 30 & sleep 30; echo done']\n");
  await using _repo = f.repo;
  const started = performance.now();
  const err = await f.environments.prepare({
    tree: f.wt.path,
    sessionId: "s1",
    role: "backend",
    env: ENV,
    ports: [],
    logPath: f.logPath,
  }).then(() => undefined, (e) => e);
  assert.ok(err instanceof WorktreeSetupError);
  assert.match(
    err.reason,
    /^setup_failed: sleep 30 & sleep 30; echo done: timed out \(setup_timeout_s: 1 s/,
  );
  assert.equal(err.prepared.setup[0].exit_code, 124);
  assert.ok(performance.now() - started < 10_000, "did not wait for the sleeps");
});

Deno.test("teardown(): every command runs whatever the others did; its output goes to the session log", async () => {
  const f = await fixture("  teardown: ['exit 3', 'echo stopped > ../teardown.out']\n");
  await using _repo = f.repo;
  const out = await f.environments.teardown({
    tree: f.wt.path,
    role: "backend",
    env: ENV,
    logPath: f.logPath,
  });
  assert.deepEqual(out?.runs.map((r) => r.exit_code), [3, 0]);
  assert.equal(out?.failure?.command, "exit 3");
  assert.equal(await Deno.readTextFile(join(f.wt.path, "../teardown.out")), "stopped\n");
  assert.match(await Deno.readTextFile(f.logPath), /worktree teardown 1\/2 FAILED: exit 3/);
});
