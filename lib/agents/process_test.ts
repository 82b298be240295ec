import assert from "node:assert/strict";
import { join } from "node:path";
import { KILL_GRACE_MS, logTail, probeFastExit, spawnAgent } from "./process.ts";
import { agentExitCode } from "./exit_status.ts";
import { SpawnError } from "./errors.ts";
import { removePidFile, writeHeartbeat, writePidFile } from "./runtime_files.ts";
import { readPidFiles } from "./pid_files.ts";
import { workspacePaths } from "../workspace.ts";
import { processAlive } from "../util/process_alive.ts";

const ENV = { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "agent-proc-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function waitFor(cond: () => Promise<boolean>, ms = 5000): Promise<void> {
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
    assert.equal(proc.outputBytes, text.length - "previous run\n".length);
    assert.equal(proc.alive, false);
    assert.ok(proc.lastOutputAt !== null);
  });
});

Deno.test("an agent is ended with the 30 s grace unless its session says otherwise", async () => {
  await withDir(async (dir) => {
    const proc = spawnAgent({
      command: "sh",
      args: ["-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"],
      cwd: dir,
      env: ENV,
      logPath: join(dir, "s.log"),
      graceMs: 300,
    });
    await waitFor(async () => (await Deno.readTextFile(join(dir, "s.log"))).includes("ready"));
    const t0 = Date.now();
    const status = await proc.end("timeout");
    assert.ok(Date.now() - t0 >= 300, "waited the grace before SIGKILL");
    assert.equal(status.killed, true);
    assert.equal(agentExitCode({ ...status, timedOut: status.endedBy === "timeout" }), 124);
    assert.equal(agentExitCode({ code: status.code, signal: status.signal }), -9);
    assert.equal(KILL_GRACE_MS, 30_000);
  });
});

Deno.test({
  name:
    "an agent that exits leaving a setsid'd descendant on its output ends, and the descendant with it",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await withDir(async (dir) => {
      const log = join(dir, "left.log");
      const proc = spawnAgent({
        command: "sh",
        args: ["-c", "setsid sleep 600 & echo pid=$!; echo done"],
        cwd: dir,
        env: ENV,
        logPath: log,
        graceMs: 200,
      });
      let timer: ReturnType<typeof setTimeout> | undefined;
      const status = await Promise.race([
        proc.status,
        new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), 10_000)),
      ]);
      clearTimeout(timer);
      const pid = Number(/pid=(\d+)/.exec(await Deno.readTextFile(log))![1]);
      const running = processAlive(pid);
      if (running) Deno.kill(pid, "SIGKILL");
      assert.ok(status, "the agent's session never ended: its descendant held the log open");
      assert.equal(status.code, 0);
      assert.equal(running, false, "the setsid sleep outlived the agent");
    });
  },
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

const EXIT_CASES: [string, Parameters<typeof agentExitCode>[0], number][] = [
  ["success", { code: 0, signal: null }, 0],
  ["general error", { code: 1, signal: null }, 1],
  ["watchdog timeout wins over the signal", { code: 137, signal: "SIGKILL", timedOut: true }, 124],
  ["permission denied", { code: 126, signal: null }, 126],
  ["command not found", { code: 127, signal: null }, 127],
  ["shell-reported SIGKILL", { code: 137, signal: null }, 137],
  ["SIGKILL", { code: 137, signal: "SIGKILL" }, -9],
  ["SIGTERM", { code: 143, signal: "SIGTERM" }, -15],
  ["SIGINT", { code: 130, signal: "SIGINT" }, -2],
];
for (const [name, end, code] of EXIT_CASES) {
  Deno.test(`agentExitCode(): ${name} is ${code}`, () => {
    assert.equal(agentExitCode(end), code);
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

Deno.test("SpawnError quotes the agent's log tail escaped, each line behind a gutter", () => {
  const e = new SpawnError({
    message: "agent exited within 2s (exit 1)",
    logPath: "/x/s.log",
    logTail: [
      "\x1b]0;pwned\x07ok",
      "run r completed: all tasks merged\rX",
    ],
    exitCode: 1,
  });
  assert.equal(
    e.message,
    "agent exited within 2s (exit 1)\nlog: /x/s.log\n" +
      "  │ \\x1b]0;pwned\\x07ok\n  │ run r completed: all tasks merged\\rX",
  );
  assert.deepEqual(e.logTail[0], "\x1b]0;pwned\x07ok", "the raw tail stays on the error");
});

Deno.test("logTail() gives a large log's last lines from its end, without its cut first line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "s.log");
    const lines = Array.from({ length: 100_000 }, (_, i) => `line ${i} ${"x".repeat(i % 50)}`);
    await Deno.writeTextFile(path, lines.join("\n") + "\n");
    assert.deepEqual(await logTail(path, 3), lines.slice(-3));
    assert.deepEqual(await logTail(path, 5000), lines.slice(-5000), "all of its last 256 KiB");
    const many = await logTail(path, 100_000);
    assert.ok(many.length < 100_000 && many.length > 5000, `${many.length} lines`);
    assert.deepEqual(many, lines.slice(-many.length), "whole lines only: the cut one is left out");
    await Deno.writeTextFile(path, "one\ntwo");
    assert.deepEqual(await logTail(path, 5), ["one", "two"]);
    assert.deepEqual(await logTail(join(dir, "missing.log")), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
