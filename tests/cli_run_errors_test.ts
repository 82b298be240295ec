/** `service run` refuses bad setups with the errors of spec §7.3 and the exit codes of §7.4. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runDeno, startServing, tempDir } from "./helpers.ts";

const PLAN = "stages:\n  - name: s\n    steps:\n      - goal: do it\n        role: backend\n";

async function repo(dir: string, config: string | undefined, plan = PLAN) {
  const git = (...args: string[]) => new Deno.Command("git", { args, cwd: dir }).output();
  await git("init", "-q", "-b", "main");
  if (config !== undefined) await Deno.writeTextFile(join(dir, "service.yaml"), config);
  await Deno.writeTextFile(join(dir, "plan.yaml"), plan);
  await git("-c", "user.email=t@l", "-c", "user.name=t", "add", "-A");
  await git("-c", "user.email=t@l", "-c", "user.name=t", "commit", "-q", "-m", "init");
}

function run(root: string, env: Record<string, string> = {}) {
  return runDeno(["run", "-A", CLI, "--root", root, "run", "--port", "0"], { clearEnv: true, env });
}

const CASES: {
  name: string;
  config?: string;
  plan?: string;
  env?: Record<string, string>;
  setup?: (dir: string) => Promise<void>;
  code: number;
  message: RegExp;
}[] = [
  {
    name: "an agent CLI missing from PATH is `RuntimeError: binary not found in PATH` (127)",
    config: "cli: generic\ncli_command: no-such-agent-cli --flag\nroles:\n  backend: {}\n",
    code: 127,
    message: /RuntimeError: binary not found in PATH: no-such-agent-cli/,
  },
  {
    name: "a binary that is not executable is `RuntimeError: Permission denied` (126)",
    config: "cli: generic\ncli_command: ./agent.sh\nroles:\n  backend: {}\n",
    setup: (dir) => Deno.writeTextFile(join(dir, "agent.sh"), "#!/bin/sh\n", { mode: 0o644 }),
    code: 126,
    message: /RuntimeError: Permission denied/,
  },
  {
    name: "an unknown adapter is `ValueError: Unknown adapter` listing the available ones",
    config: "cli: cursor\nroles:\n  backend: {}\n",
    code: 1,
    message:
      /Unknown adapter 'cursor'\. Available adapters: aider, claude, codex, gemini, generic, qwen/,
  },
  {
    name: "no service.yaml is a ValidationError naming the required keys",
    config: undefined,
    code: 1,
    message: /ValidationError: .*no service\.yaml[\s\S]*cli: claude[\s\S]*roles:/,
  },
  {
    name: "a plan that does not match the schema is a plan error naming the path",
    config: "cli: generic\ncli_command: [sh, -c, 'true']\nroles:\n  backend: {}\n",
    plan: "stages:\n  - name: s\n    steps:\n      - goal: do it\n        role: frontend\n",
    code: 1,
    message: /stages\[0\]\.steps\[0\]\.role/,
  },
];

for (const c of CASES) {
  Deno.test(`service run: ${c.name}`, async () => {
    await using dir = await tempDir();
    await c.setup?.(dir.path);
    await repo(dir.path, c.config, c.plan);
    const r = await run(dir.path, c.env);
    assert.equal(r.code, c.code, r.text);
    assert.match(r.text, c.message);
    assert.doesNotMatch(r.text, /^\s+at /m, "no stack trace without --debug");
  });
}

Deno.test("service run: claude without its API key warns `API key not set` and exits non-zero at once", async () => {
  await using dir = await tempDir();
  const bin = join(dir.path, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(join(bin, "claude"), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const root = join(dir.path, "ws");
  await Deno.mkdir(root);
  await repo(root, "cli: claude\nroles:\n  backend: {}\n");
  const started = Date.now();
  const r = await run(root, { PATH: `${bin}:${Deno.env.get("PATH")}` });
  assert.notEqual(r.code, 0, r.text);
  assert.match(r.text, /API key not set: .*ANTHROPIC_API_KEY/);
  assert.ok(Date.now() - started < 15_000);
});

Deno.test("service run refuses to open a second task store while `service serve` holds the workspace's", async () => {
  await using dir = await tempDir();
  await repo(dir.path, "cli: generic\ncli_command: [sh, -c, 'true']\nroles:\n  backend: {}\n");
  {
    await using _server = await startServing([CLI, "--root", dir.path, "serve", "--port", "0"]);
    const r = await run(dir.path);
    assert.equal(r.code, 1, r.text);
    assert.match(r.text, /task store of this workspace is open in process \d+/);
  }
  const owner = join(dir.path, ".sdd/runtime/task-store.owner");
  assert.equal(
    await Deno.stat(owner).then(() => true, () => false),
    false,
    "the server gave the store up on exit",
  );
});

Deno.test("`service gui serve` (no task API) does not hold the task store: a run can start beside it", async () => {
  await using dir = await tempDir();
  await repo(dir.path, "cli: generic\ncli_command: [sh, -c, 'true']\nroles:\n  backend: {}\n");
  await using _server = await startServing([
    CLI,
    "--root",
    dir.path,
    "gui",
    "serve",
    "--port",
    "0",
  ]);
  const owner = join(dir.path, ".sdd/runtime/task-store.owner");
  assert.equal(await Deno.stat(owner).then(() => true, () => false), false);
});
