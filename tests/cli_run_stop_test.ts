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

/** A repository whose service.yaml runs the scripted agent (the plan is the test's). */
async function scriptedWorkspace(root: string) {
  await git(root, "init", "-q", "-b", "main");
  await git(root, "config", "user.email", "t@localhost");
  await git(root, "config", "user.name", "t");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${
      JSON.stringify(["deno", "run", "-A", AGENT])
    }\nroles:\n  backend: {}\n`,
  );
}

Deno.test("run --detach starts in the background; stop ends it cleanly; run resumes and finishes", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await scriptedWorkspace(root);
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

Deno.test("Ctrl-C twice: the second does not wait out the 30 s grace of an agent that ignores SIGTERM; its work is kept and the run resumes from it", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await scriptedWorkspace(root);
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    `stages:\n  - name: s\n    steps:\n      - id: stubborn\n        role: backend\n        goal: |\n          wait\n          \`\`\`agent-script\n          ["if_missing", "w.txt", [["write", "w.txt", "work\\n"], ["print", "ready"], ["hang"]]]\n          ["report"]\n          \`\`\`\n`,
  );
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "init");
  // The default grace (30 s): no SERVICE_KILL_GRACE_S.
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let seen = "";
  const read = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    const decoder = new TextDecoder();
    for await (const bytes of stream) seen += decoder.decode(bytes, { stream: true });
  };
  const reading = Promise.all([read(child.stdout), read(child.stderr)]);
  const waitFor = async (pattern: RegExp, what: string) => {
    const deadline = Date.now() + 60_000;
    while (!pattern.test(seen)) {
      assert.ok(Date.now() < deadline, `timed out waiting for ${what}:\n${seen}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const log = () => {
    const logs = join(root, ".sdd/runtime");
    for (const e of Deno.readDirSync(logs)) {
      if (e.name.endsWith(".log") && e.name.startsWith("s-")) {
        return Deno.readTextFileSync(join(logs, e.name));
      }
    }
    return "";
  };
  try {
    await waitFor(/stubborn: agent \S+ started/, "the agent's start");
    const deadline = Date.now() + 60_000;
    while (!log().includes("ready")) {
      assert.ok(Date.now() < deadline, "the agent never got to its hang");
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGINT");
    await waitFor(
      /stopping: agents get SIGTERM, then SIGKILL after the grace.*\(Ctrl-C again to stop now\)/,
      "the first stop",
    );
    await new Promise((r) => setTimeout(r, 500)); // its SIGTERM is ignored
    const second = performance.now();
    child.kill("SIGINT");
    const status = await child.status;
    const took = performance.now() - second;
    await reading;
    assert.equal(status.code, 130, seen);
    assert.ok(took < 15_000, `ended ${Math.round(took)} ms after the second Ctrl-C, not 30 s`);
    assert.match(seen, /stopping now: agents get SIGKILL; their work is kept/);
    assert.match(seen, /stubborn: ORPHANED/);
    // The list under the last line names what did not land, FAILED tasks too: it says so.
    assert.match(seen, /resumes it \(1 unfinished task\(s\)\); not landed:\n\s+stubborn: ORPHANED/);
    // `status` names it too, with the same reason, once no process runs the run.
    const told = await cli(root, "status");
    assert.match(told.text, /\n\s+stubborn ORPHANED: \S/, told.text);
    // Its work stays in its worktree (resumed from there); only that attempt wrote w.txt.
    const kept = await git(root, "worktree", "list", "--porcelain");
    const tree = /worktree (\S+\.sdd\/worktrees\/\S+)/.exec(kept)?.[1];
    assert.ok(tree, kept);
    assert.equal(await Deno.readTextFile(join(tree, "w.txt")), "work\n");
    const resumed = await cli(root, "run", "--port", "0");
    assert.equal(resumed.code, 0, resumed.text);
    assert.equal(await Deno.readTextFile(join(root, "w.txt")), "work\n");
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* ended */ }
  }
});

Deno.test("run --detach with every step already landed says nothing to do and exits 0, as the foreground run does, not that the background run 'exited at once'", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await scriptedWorkspace(root);
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    `stages:\n  - name: s\n    steps:\n      - id: one\n        role: backend\n        goal: |\n          write\n          \`\`\`agent-script\n          ["write", "w.txt", "work\\n"]\n          ["report"]\n          \`\`\`\n`,
  );
  await git(root, "add", "-A");
  await git(root, "commit", "-q", "-m", "init");
  const first = await cli(root, "run", "plan.yaml", "--port", "0");
  assert.equal(first.code, 0, first.text);
  const again = await cli(root, "run", "--detach", "plan.yaml", "--port", "0");
  assert.equal(again.code, 0, again.text);
  assert.match(again.text, /nothing to do: all 1 step\(s\) of plan\.yaml already landed/);
  assert.doesNotMatch(again.text, /exited at once/);
});
