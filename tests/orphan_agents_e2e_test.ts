/**
 * Agents die with the process that started them (lib/process/tether.ts): a `service worker` or a
 * `service run` killed with `kill -9` runs none of its own code, yet its agent must not keep
 * running and writing into its worktree, or report with its token once its lease is gone.
 *
 * Each agent here holds a FIFO of the test open for writing while it loops writing ticks into its
 * worktree: the test's read of that FIFO ends when no process of the agent is left.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { CLI, rowsOf, sh, until, workspace } from "./_e2e.ts";
import {
  killProcessesWith,
  mkfifo,
  settlesWithin,
  tethersOf,
} from "../lib/process/_test_processes.ts";
import { processAlive } from "../lib/util/process_alive.ts";
import {
  serveForWorkers,
  sharedRemote,
  startWorker,
  WORKER_AUTH_YAML,
  workerClone,
} from "./_workers.ts";

/** How long an orphan may take to go (the tether's grace between SIGTERM and SIGKILL is 1 s). */
const GONE_WITHIN_MS = 20_000;

/**
 * The first attempt's agent: keeps its environment where the test reads it, then loops writing
 * ticks into its worktree with the FIFO `alive` open (a `setsid` child holds it too).
 */
function loopingAgent(dir: string, alive: string): { script: string; survivors: string[] } {
  // Their command lines name `dir`: what a failed test leaves is found by them and ended.
  const escapee = `while :; do sleep 0.2; done # ${dir}`;
  const script = `env > ${join(dir, "agent-env")}; exec 3>${alive}; ` +
    `(setsid sh -c '${escapee}' &); while :; do date >> ticks.txt; sleep 0.1; done # ${dir}`;
  return { script, survivors: [script, escapee] };
}

/**
 * True once the agent has written 3 ticks: it runs, and its tree has long been tied to the tether
 * (its line is written as it starts: lib/process/tether.ts).
 */
async function ranAWhile(ticks: string): Promise<boolean> {
  const text = await Deno.readTextFile(ticks).catch(() => "");
  return text.split("\n").length > 3;
}

/** Resolves true when every writer of the FIFO opened as `reader` is gone, false after `ms`. */
function writersGone(reader: Deno.FsFile, ms: number): Promise<boolean> {
  return settlesWithin(new Response(reader.readable).text(), ms);
}

/** The agent's environment as it kept it. */
async function agentEnv(dir: string): Promise<Record<string, string>> {
  const text = await Deno.readTextFile(join(dir, "agent-env"));
  return Object.fromEntries(
    text.split("\n").filter((l) => l.includes("=")).map((l) => {
      const i = l.indexOf("=");
      return [l.slice(0, i), l.slice(i + 1)];
    }),
  );
}

Deno.test({
  name:
    "a worker killed with SIGKILL takes its agent with it: no process of it runs on, and what its stale credential sends after the lease is lost is refused",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const alive = join(dir.path, "alive");
    await mkfifo(alive);
    const agent = loopingAgent(dir.path, alive);
    const { root, bare } = await sharedRemote(dir.path, [{
      name: "s",
      steps: [{
        id: "t",
        script: [
          ["first_attempt", [["run", agent.script]]],
          ["write", "out.txt", "second attempt\n"],
          ["report", "done"],
        ],
      }],
    }], "max_agents: 0\nheartbeat_timeout_s: 3\n" + WORKER_AUTH_YAML);
    const server = await serveForWorkers(root);
    try {
      const clone = await workerClone(dir.path, bare, "w1");
      await using w1 = startWorker(clone, server.url, "w1");
      const lines: string[] = [];
      const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
      // Opening for reading waits for the agent's writer: from here on it runs and writes.
      const reader = await Deno.open(alive, { read: true });
      const session = /t: agent (\S+) starting/.exec(await w1.saw(/t: agent \S+ starting/))![1];
      const ticks = join(clone, ".sdd/worktrees", session, "ticks.txt");
      await until(
        "the agent writes",
        async () => await ranAWhile(ticks),
      );
      await w1.kill();
      assert.ok(
        await writersGone(reader, GONE_WITHIN_MS),
        "the agent of the worker killed with SIGKILL still runs",
      );
      const size = (await Deno.stat(ticks)).size;
      // Its lease runs out; the task goes to another worker, which finishes it.
      await using _w2 = startWorker(await workerClone(dir.path, bare, "w2"), server.url, "w2");
      const done = await result;
      assert.equal(done.status, "completed", lines.join("\n"));
      assert.equal((await Deno.stat(ticks)).size, size, "nothing was written after its end");
      const rows = await rowsOf(root, done.runId);
      const lost = rows.find((r) => r.type === "agent_exited" && r.data.session_id === session);
      assert.equal(lost?.data.lease_lost, true);
      assert.equal(rows.filter((r) => r.type === "task_merged").length, 1);
      // Whatever a stale copy of that session sends with its credential is refused.
      const env = await agentEnv(dir.path);
      assert.equal(env.SERVICE_SESSION_ID, session);
      const auth = { authorization: `Bearer ${env.SERVICE_TOKEN}` };
      for (const what of ["complete", "fail", "heartbeat"]) {
        const res = await fetch(`${env.SERVICE_SERVER_URL}/tasks/t/${what}`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify({ summary: "stale", reason: "stale", session_id: session }),
        });
        const body = await res.text();
        assert.ok(
          res.status === 401 || res.status === 403 || res.status === 409,
          `${what}: ${res.status} ${body}`,
        );
      }
      const after = await rowsOf(root, done.runId);
      assert.equal(after.length, rows.length, "the stale session's requests journaled nothing");
    } finally {
      await server.shutdown();
      for (const s of agent.survivors) killProcessesWith(s);
    }
  },
});

Deno.test({
  name:
    "`service run` killed with SIGKILL takes its agents with it; the next run ends nothing stale and continues from the kept work",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const alive = join(dir.path, "alive");
    await mkfifo(alive);
    const agent = loopingAgent(dir.path, alive);
    const root = join(dir.path, "ws");
    await Deno.mkdir(root);
    await workspace(root, [{
      name: "s",
      steps: [{
        id: "t",
        script: [
          // A continued attempt starts from the kept work, which holds partial.txt.
          ["if_missing", "partial.txt", [["write", "partial.txt", "kept\n"], [
            "run",
            agent.script,
          ]]],
          ["write", "out.txt", "second attempt\n"],
          ["report", "done"],
        ],
      }],
    }]);
    let run: Deno.ChildProcess | undefined;
    try {
      run = new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
        env: { NO_COLOR: "1" },
        stdout: "null",
        stderr: "null",
      }).spawn();
      const reader = await Deno.open(alive, { read: true });
      const env = await agentEnv(dir.path);
      const ticks = join(root, ".sdd/worktrees", env.SERVICE_SESSION_ID, "ticks.txt");
      await until(
        "the agent writes",
        async () => await ranAWhile(ticks),
      );
      run.kill("SIGKILL");
      await run.status;
      assert.ok(
        await writersGone(reader, GONE_WITHIN_MS),
        "the agent of the `service run` killed with SIGKILL still runs",
      );
      const again = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
        env: { NO_COLOR: "1" },
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(120_000),
      }).output();
      const out = new TextDecoder().decode(again.stdout) + new TextDecoder().decode(again.stderr);
      assert.equal(again.code, 0, out);
      assert.doesNotMatch(out, /stale agent .* still running/, "nothing of the old run was left");
      assert.equal(await Deno.readTextFile(join(root, "partial.txt")), "kept\n");
      assert.equal(await Deno.readTextFile(join(root, "out.txt")), "second attempt\n");
      const runs = [...Deno.readDirSync(join(root, ".sdd/runs"))].map((e) => e.name);
      const rows = await rowsOf(root, runs[0]);
      assert.equal(rows.filter((r) => r.type === "task_merged").length, 1);
      assert.equal(await sh(root, "status", "--porcelain"), "");
    } finally {
      try {
        run?.kill("SIGKILL");
      } catch { /* gone */ }
      await run?.status;
      for (const s of agent.survivors) killProcessesWith(s);
    }
  },
});

Deno.test({
  name:
    "a `service run` that finishes exits by itself and leaves no tether: the one that watched its agent exits with it",
  ignore: Deno.build.os !== "linux",
  async fn() {
    await using dir = await tempDir();
    const go = join(dir.path, "go");
    await mkfifo(go);
    const root = join(dir.path, "ws");
    await Deno.mkdir(root);
    await workspace(root, [{
      name: "s",
      steps: [{
        id: "t",
        // The agent waits for the test (its read of the FIFO ends when the test closes it).
        script: [["run", `cat ${go}`], ["write", "out.txt", "done\n"], ["report", "done"]],
      }],
    }]);
    const run = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).spawn();
    const output = run.output();
    // Opening for writing waits for the agent's reader: its tree runs from here on.
    const writer = await Deno.open(go, { write: true });
    const tethers = tethersOf(run.pid);
    writer.close();
    assert.equal(tethers.length, 1, "the run's one tether watches its agent");
    const done = await output;
    const out = new TextDecoder().decode(done.stdout) + new TextDecoder().decode(done.stderr);
    assert.equal(done.signal, null, `the run exited by itself: ${out}`);
    assert.equal(done.code, 0, out);
    await until(
      "the run's tether to exit",
      () => Promise.resolve(!processAlive(tethers[0])),
      5_000,
    );
    assert.deepEqual(tethersOf(run.pid), []);
  },
});
