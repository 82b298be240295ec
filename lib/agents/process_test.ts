import assert from "node:assert/strict";
import { join } from "node:path";
import { groupAlive, killTree, probeFastExit, spawnAgent, terminateWithGrace } from "./process.ts";
import { agentExitCode, describeExitCode } from "./exit_status.ts";
import { SpawnError } from "./errors.ts";
import { removePidFile, writeHeartbeat, writePidFile } from "./runtime_files.ts";
import { readPidFiles } from "./pid_files.ts";
import { workspacePaths } from "../workspace.ts";

const ENV = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "agent-proc-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function alive(pid: number): boolean {
  try {
    Deno.kill(pid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}

async function waitFor(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 20));
  }
}

Deno.test("spawnAgent() appends stdout and stderr to the log and reports the exit", async () => {
  await withDir(async (dir) => {
    const log = join(dir, "s1.log");
    await Deno.writeTextFile(log, "previous run\n");
    const proc = spawnAgent({
      command: "sh",
      args: ["-c", 'echo out; echo err >&2; echo "key=${SECRET:-unset}"; exit 3'],
      cwd: dir,
      env: ENV,
      logPath: log,
    });
    const status = await proc.status;
    assert.equal(status.code, 3);
    const text = await Deno.readTextFile(log);
    assert.ok(text.startsWith("previous run\n"));
    for (const l of ["out", "err", "key=unset"]) assert.ok(text.includes(l + "\n"), l);
    assert.equal(proc.logBytes, text.length - "previous run\n".length);
    assert.equal(proc.alive, false);
    assert.ok(proc.lastOutputAt !== null);
  });
});

Deno.test("terminateWithGrace() kills the whole tree, including a child that ignores SIGTERM", async () => {
  await withDir(async (dir) => {
    const log = join(dir, "tree.log");
    const script =
      `trap '' TERM; sh -c 'trap "" TERM; echo grandchild $$; while :; do sleep 0.1; done' &
echo child $$; wait`;
    const proc = spawnAgent({
      command: "sh",
      args: ["-c", script],
      cwd: dir,
      env: ENV,
      logPath: log,
    });
    await waitFor(async () => /grandchild \d+/.test(await Deno.readTextFile(log)));
    const grandchild = Number(/grandchild (\d+)/.exec(await Deno.readTextFile(log))![1]);
    assert.ok(alive(grandchild));
    const t0 = Date.now();
    const result = await terminateWithGrace(proc, { graceMs: 300 });
    assert.ok(Date.now() - t0 >= 300, "waited the grace before SIGKILL");
    assert.equal(result.killed, true);
    assert.equal(result.status.signal, "SIGKILL");
    assert.equal(agentExitCode({ code: result.status.code, signal: result.status.signal }), -9);
    await waitFor(() => !alive(grandchild));
    assert.equal(groupAlive(proc.pid), false);
  });
});

Deno.test("terminateWithGrace() stops at SIGTERM when the tree obeys it", async () => {
  await withDir(async (dir) => {
    const proc = spawnAgent({
      command: "sh",
      args: ["-c", "sleep 30 & wait"],
      cwd: dir,
      env: ENV,
      logPath: join(dir, "s.log"),
    });
    const result = await terminateWithGrace(proc, { graceMs: 5000 });
    assert.equal(result.killed, false);
    assert.equal(result.status.signal, "SIGTERM");
    assert.equal(agentExitCode({ code: result.status.code, signal: result.status.signal }), -15);
    assert.equal(killTree(proc.pid, "SIGTERM"), false, "nothing left to signal");
  });
});

Deno.test("probeFastExit() turns an exit within 2s into a SpawnError with the log tail", async () => {
  await withDir(async (dir) => {
    const log = join(dir, "fast.log");
    const proc = spawnAgent({
      command: "sh",
      args: ["-c", "echo 'API key not set: ANTHROPIC_API_KEY' >&2; exit 1"],
      cwd: dir,
      env: ENV,
      logPath: log,
    });
    await assert.rejects(probeFastExit(proc), (e) => {
      assert.ok(e instanceof SpawnError);
      assert.match(e.message, /^agent exited within 2s \(exit 1\)/);
      assert.equal(e.logPath, log);
      assert.deepEqual(e.logTail, ["API key not set: ANTHROPIC_API_KEY"]);
      return true;
    });
  });
});

Deno.test("probeFastExit() lets a long-running agent through after the window", async () => {
  await withDir(async (dir) => {
    await using proc = spawnAgent({
      command: "sh",
      args: ["-c", "sleep 30"],
      cwd: dir,
      env: ENV,
      logPath: join(dir, "slow.log"),
    });
    assert.equal(await probeFastExit(proc, { windowMs: 200 }), undefined);
    assert.equal(proc.alive, true);
  });
});

const EXIT_CASES: [string, Parameters<typeof agentExitCode>[0], number, string][] = [
  ["success", { code: 0, signal: null }, 0, "success"],
  ["general error", { code: 1, signal: null }, 1, "general error"],
  [
    "watchdog timeout wins over the signal",
    { code: 137, signal: "SIGKILL", timedOut: true },
    124,
    "timeout (watchdog kill)",
  ],
  ["permission denied", { code: 126, signal: null }, 126, "permission denied"],
  ["command not found", { code: 127, signal: null }, 127, "command not found"],
  ["shell-reported SIGKILL", { code: 137, signal: null }, 137, "SIGKILL, likely out of memory"],
  ["SIGKILL", { code: 137, signal: "SIGKILL" }, -9, "SIGKILL"],
  ["SIGTERM", { code: 143, signal: "SIGTERM" }, -15, "SIGTERM"],
  ["SIGINT", { code: 130, signal: "SIGINT" }, -2, "SIGINT"],
];
for (const [name, end, code, meaning] of EXIT_CASES) {
  Deno.test(`agentExitCode(): ${name} is ${code}`, () => {
    assert.equal(agentExitCode(end), code);
    assert.equal(describeExitCode(code), meaning);
  });
}

Deno.test("PID and heartbeat files are written atomically and read back", async () => {
  await withDir(async (root) => {
    const paths = workspacePaths(root);
    const runtime = paths.runtime;
    const pidPath = await writePidFile(runtime, {
      session_id: "s1",
      pid: 4242,
      pgid: 4242,
      adapter: "claude",
      task_id: "t1",
      command: ["claude", "-p"],
      log_path: join(runtime, "s1.log"),
      started_at: 1_763_719_200,
    });
    assert.equal(pidPath, join(runtime, "pids", "s1.json"));
    await Deno.writeTextFile(join(runtime, "pids", "torn.json"), "{");
    const agents = await readPidFiles(paths);
    assert.deepEqual(agents.map((a) => [a.session_id, a.pid, a.pgid]), [
      ["s1", 4242, 4242],
      ["torn", null, null],
    ]);
    assert.equal(agents[0].problem, undefined);
    assert.match(agents[1].problem ?? "", /^unreadable: /);
    const hb = await writeHeartbeat(runtime, {
      session_id: "s1",
      pid: 4242,
      alive: true,
      last_output_at: null,
      log_bytes: 0,
      updated_at: 1_763_719_215,
    });
    assert.equal(JSON.parse(await Deno.readTextFile(hb)).alive, true);
    assert.deepEqual([...Deno.readDirSync(join(runtime, "heartbeats"))].map((e) => e.name), [
      "s1.json",
    ]);
    await removePidFile(runtime, "s1");
    await removePidFile(runtime, "s1");
    assert.deepEqual((await readPidFiles(paths)).map((a) => a.session_id), ["torn"]);
  });
});
