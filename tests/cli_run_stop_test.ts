/** The real CLI: `run --detach`, `stop` (agents SIGTERM'd, work kept, PID files removed), resume. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runDeno, tempDir } from "./helpers.ts";

const AGENT = new URL("../agents/scripted_agent.ts", import.meta.url).pathname;

function cli(root: string, ...args: string[]) {
  return runDeno(["run", "-A", CLI, "--root", root, ...args], {
    env: { SERVICE_KILL_GRACE_S: "1" },
  });
}

async function git(cwd: string, ...args: string[]) {
  const out = await new Deno.Command("git", { args, cwd }).output();
  assert.ok(out.success, `git ${args.join(" ")}`);
  return new TextDecoder().decode(out.stdout);
}

Deno.test("run --detach starts in the background; stop ends it cleanly; run resumes and finishes", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await git(root, "init", "-q", "-b", "main");
  await git(root, "config", "user.email", "t@localhost");
  await git(root, "config", "user.name", "t");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${
      JSON.stringify(["deno", "run", "-A", AGENT])
    }\nroles:\n  backend: {}\n`,
  );
  // The agent writes, then waits for a flag file that the test creates after the stop.
  const flag = join(root, "..", `${crypto.randomUUID()}.go`);
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    `stages:\n  - name: s\n    steps:\n      - id: long\n        role: backend\n        goal: |\n          wait\n          \`\`\`agent-script\n          ["write", "w.txt", "work\\n"]\n          ["run", "while [ ! -f ${flag} ]; do sleep 0.1; done"]\n          ["report"]\n          \`\`\`\n`,
  );
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "init");
  try {
    const started = await cli(root, "run", "--detach", "--port", "0");
    assert.equal(started.code, 0, started.text);
    assert.match(started.text, /started in the background/);
    const pidDir = join(root, ".sdd/runtime/pids");
    // `run --detach` returns once the run is registered; the first agent may start a moment later.
    const pidFiles = () => {
      try {
        return [...Deno.readDirSync(pidDir)];
      } catch {
        return [];
      }
    };
    for (let i = 0; i < 100 && pidFiles().length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(pidFiles().length, 1, "one live agent");

    const stopped = await cli(root, "stop");
    assert.equal(stopped.code, 0, stopped.text);
    assert.match(stopped.text, /stopped; `service run` resumes it \(\d+ unfinished task\(s\)\)/);
    assert.deepEqual(pidFiles(), [], "PID files removed");
    const state = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    assert.equal(state.status, "stopped");
    // The detached run's task server kept its log (spec: .sdd/runtime/server.log).
    const serverLog = await Deno.readTextFile(join(root, ".sdd/runtime/server.log"));
    assert.match(serverLog, new RegExp(`listening on ${state.url.replace(/\./g, "\\.")} `));
    assert.match(serverLog, /stopped \(http/);
    assert.ok(state.unfinished >= 1, "the stopped run has unfinished tasks");
    const branches = await git(
      root,
      "for-each-ref",
      "--format=%(refname)",
      "refs/heads/agent/",
      "refs/service/rescue/",
    );
    assert.ok(branches.trim().length > 0, "the stopped agent's work is kept on its branch");

    await Deno.writeTextFile(flag, "");
    const resumed = await cli(root, "run", "--port", "0");
    assert.equal(resumed.code, 0, resumed.text);
    assert.match(resumed.text, /resuming run/);
    assert.equal(await Deno.readTextFile(join(root, "w.txt")), "work\n");
  } finally {
    await Deno.remove(flag).catch(() => {});
  }
});

Deno.test("doctor lists rescued work (refs/service/rescue/*) as a warning with how to merge it", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await git(root, "init", "-q", "-b", "main");
  await git(
    root,
    "-c",
    "user.email=t@l",
    "-c",
    "user.name=t",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "init",
  );
  // Work main does not hold: a commit on a branch of its own.
  await git(root, "checkout", "-q", "-b", "lost");
  await git(
    root,
    "-c",
    "user.email=t@l",
    "-c",
    "user.name=t",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "lost work",
  );
  await git(root, "checkout", "-q", "main");
  await git(root, "update-ref", "refs/service/rescue/s-lost", "lost");
  await git(root, "branch", "-q", "-D", "lost");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "doctor", "--json"],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "null",
  }).output();
  const report = JSON.parse(new TextDecoder().decode(out.stdout));
  const rescued = report.checks.find((c: { name: string }) => c.name === "rescued work");
  assert.equal(rescued.warning, true);
  assert.match(rescued.detail, /refs\/service\/rescue\/s-lost/);
  assert.match(rescued.fix, /git merge <ref>/);
});
