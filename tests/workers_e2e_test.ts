/**
 * Remote workers end to end on loopback (DESIGN.md §16): an orchestrator and `service worker`
 * processes, each with its own clone of a shared bare remote, the scripted agent; every landed
 * commit is traced to the one worker that made it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { CLI, cliAs, rowsOf, runEnv, sh, until, withEnv, workspace } from "./_e2e.ts";
import { startFakeGithub } from "./fakes/github_api.ts";
import {
  serveForWorkers,
  sharedRemote,
  startWorker,
  WORKER_AUTH_YAML,
  WORKER_READ,
  WORKER_TOKEN,
  workerClone,
} from "./_workers.ts";

const WORKERS_ONLY = "max_agents: 0\nheartbeat_timeout_s: 3\n" + WORKER_AUTH_YAML;

/** Files under `dir` (outside `skip`) whose bytes contain `needle`. */
async function grepTree(dir: string, needle: string, skip: string): Promise<string[]> {
  const found: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const path = join(dir, e.name);
    if (path === skip) continue;
    if (e.isDirectory) found.push(...await grepTree(path, needle, skip));
    else if (e.isFile && (await Deno.readTextFile(path).catch(() => "")).includes(needle)) {
      found.push(path);
    }
  }
  return found;
}

/** The run's rows of `type` for `task`. */
function rowsFor(
  rows: { type: string; data: Record<string, unknown> }[],
  type: string,
  task: string,
) {
  return rows.filter((r) => r.type === type && r.data.task_id === task);
}

/**
 * A workers-only workspace whose one task `t` waits for the file `go` (in `dir`), then writes
 * `out.txt` with `out` and reports; `first` is written before the wait.
 */
async function waitingTask(
  dir: string,
  o: { out: string; config: string; first?: [string, string] },
): Promise<{ root: string; bare: string; go: string }> {
  const go = join(dir, "go");
  const { root, bare } = await sharedRemote(dir, [{
    name: "s",
    steps: [{
      id: "t",
      script: [
        ...(o.first ? [["write", ...o.first]] : []),
        ["run", `while [ ! -f ${go} ]; do sleep 0.1; done`],
        ["write", "out.txt", o.out],
        ["report", "done"],
      ],
    }],
  }], o.config);
  return { root, bare, go };
}

Deno.test("two workers run a plan's tasks and each landed commit is traced to one worker", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [
      // Each takes a moment, so the second task goes to the second worker's free slot.
      {
        id: "a",
        script: [["write", "a.txt", "from a\n"], ["run", "env"], ["sleep", 1500], [
          "report",
          "a done",
        ]],
      },
      { id: "b", script: [["write", "b.txt", "from b\n"], ["sleep", 1500], ["report", "b done"]] },
    ],
  }], WORKERS_ONLY + "agent_env: [ANTHROPIC_API_KEY]\n");
  const server = await serveForWorkers(root);
  try {
    await using _w1 = startWorker(
      await workerClone(dir.path, bare, "w1"),
      server.url,
      "w1",
      { env: { ANTHROPIC_API_KEY: "sk-w1-own" } },
    );
    await using _w2 = startWorker(
      await workerClone(dir.path, bare, "w2"),
      server.url,
      "w2",
      { env: { ANTHROPIC_API_KEY: "sk-w2-own" } },
    );
    const lines: string[] = [];
    // The orchestrator's provider key: workers use their own and never receive it.
    const env = runEnv({ ANTHROPIC_API_KEY: "sk-orchestrator-only" });
    const result = await runPlan({ root, server, app: SERVER_APP, env, out: (l) => lines.push(l) });
    assert.equal(result.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, result.runId);
    const seen = await grepTree(dir.path, "sk-orchestrator-only", root);
    assert.deepEqual(seen, [], "nothing a worker received or wrote holds the orchestrator's key");
    // The agent ran with its worker's own key (agent_env forwards it), as the log it sent says.
    const claimA = rowsFor(rows, "task_claimed", "a")[0].data;
    const logA = await Deno.readTextFile(
      join(root, ".sdd/runs", result.runId, "logs", `${claimA.session_id}.log`),
    ).catch(() => Deno.readTextFile(join(root, ".sdd/runtime", `${claimA.session_id}.log`)));
    assert.match(logA, new RegExp(`ANTHROPIC_API_KEY=sk-${claimA.worker}-own`));
    const ranOn = new Set<unknown>();
    for (const id of ["a", "b"]) {
      const [claim] = rowsFor(rows, "task_claimed", id);
      assert.match(String(claim.data.worker), /^w[12]$/, `${id} was claimed on a worker`);
      ranOn.add(claim.data.worker);
      const [exit] = rowsFor(rows, "agent_exited", id);
      assert.equal(exit.data.worker, claim.data.worker, "the exit names the claim's worker");
      const [merged] = rowsFor(rows, "task_merged", id);
      // The landed merge holds the commit that worker pushed, and that commit is the worker's.
      const parents = (await sh(root, "rev-list", "--parents", "-n1", String(merged.data.commit)))
        .trim().split(" ").slice(1);
      assert.ok(
        parents.includes(String(exit.data.commit)),
        `${id}'s merge holds the pushed commit`,
      );
      // Exactly one attempt, one worker: nothing of the task ran or landed twice.
      assert.equal(rowsFor(rows, "task_claimed", id).length, 1);
      assert.equal(rowsFor(rows, "task_merged", id).length, 1);
    }
    assert.deepEqual([...ranOn].sort(), ["w1", "w2"], "both workers served the one run");
    assert.equal(await Deno.readTextFile(join(root, "a.txt")), "from a\n");
    assert.equal(await Deno.readTextFile(join(root, "b.txt")), "from b\n");
    // The run is over and its server gone: a worker says so once, and keeps asking.
    await server.shutdown();
    await _w1.saw(/worker w1: http:\/\/127\.0\.0\.1:\d+ does not answer \(.*\); asking again/);
  } finally {
    await server.shutdown();
  }
});

/** The remote's `agent/*` branches. */
async function agentBranches(bare: string): Promise<string[]> {
  const out = await sh(bare, "for-each-ref", "--format=%(refname:short)", "refs/heads/agent");
  return out.split("\n").filter(Boolean);
}

Deno.test("a worker killed mid-task loses its lease; its pushed commit is the partial work another worker continues", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{
      id: "t",
      script: [
        ["first_attempt", [
          ["write", "partial.txt", "half done\n"],
          // The agent commits its progress; the worker pushes it at its next heartbeat.
          ["run", "git add -A && git -c user.name=a -c user.email=a@x commit -qm partial"],
          // Long enough that the agent is still at work while the test reads `ps` and `status`
          // (two CLI starts: seconds on a loaded machine); the worker is killed before it ends.
          ["sleep", 30_000],
          ["exit", 1],
        ]],
        ["require_prompt", "EARLIER WORK:"],
        ["write", "rest.txt", "finished\n"],
        ["report", "continued and finished"],
      ],
    }],
  }], WORKERS_ONLY);
  const server = await serveForWorkers(root);
  try {
    await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await w1.saw(/t: agent .* starting/);
    await until("w1 pushed the partial work", async () => (await agentBranches(bare)).length > 0);
    // Where the task runs, as `ps`, `status` and the board's task detail say it.
    const ps = await cliAs(WORKER_TOKEN, root, "ps");
    assert.match(ps.out, /t\s+backend\s+worker w1/);
    const statusText = await cliAs(WORKER_TOKEN, root, "status");
    assert.match(statusText.out, /agents: 0 live, 1 on remote workers\n {2}t: on worker w1/);
    const status = await (await fetch(`${server.url}/status`, { headers: WORKER_READ })).json();
    assert.equal(status.workers[0].worker, "w1");
    // Its one slot holds the task: none is free (not the count it had when it asked).
    assert.equal(status.worker_pool[0].free, 0);
    assert.match(statusText.out, /workers: w1 busy \(0\/1 free/);
    const detail = await (await fetch(
      `${server.url}/review-board/runs/${status.run.run_id}/tasks/t`,
      { headers: WORKER_READ },
    )).json();
    assert.equal(detail.task.attempts[0].worker, "w1");
    await w1.kill();
    await using _w2 = startWorker(await workerClone(dir.path, bare, "w2"), server.url, "w2");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    const claims = rowsFor(rows, "task_claimed", "t");
    assert.deepEqual(claims.map((r) => r.data.worker), ["w1", "w2"]);
    const [lost] = rowsFor(rows, "agent_exited", "t");
    assert.equal(lost.data.worker, "w1");
    // Its agent's end was never seen (its worker died, the agent may run on): the row says so,
    // and the board shows no exit code for it.
    assert.equal(lost.data.lease_lost, true);
    const after = await (await fetch(
      `${server.url}/review-board/runs/${done.runId}/tasks/t`,
      { headers: WORKER_READ },
    )).json();
    const first = after.task.attempts.find((a: { number: number }) => a.number === 1);
    assert.equal(first.exit.lease_lost, true, JSON.stringify(first));
    const [failed] = rowsFor(rows, "task_verification_failed", "t");
    assert.match(JSON.stringify(failed.data), /worker w1 stopped heartbeating: its lease expired/);
    assert.match(JSON.stringify(failed.data), /the work it pushed is kept/);
    // Both attempts' work landed together, once.
    assert.equal(await Deno.readTextFile(join(root, "partial.txt")), "half done\n");
    assert.equal(await Deno.readTextFile(join(root, "rest.txt")), "finished\n");
    assert.equal(rowsFor(rows, "task_merged", "t").length, 1);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a worker that reports after its lease expired gets 409 and nothing lands twice", async () => {
  await using dir = await tempDir();
  const go = join(dir.path, "go");
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{
      id: "t",
      script: [
        // The first attempt waits (its worker is paused meanwhile), then writes and reports late.
        ["first_attempt", [["run", `while [ ! -f ${go} ]; do sleep 0.1; done`]]],
        ["write", "out.txt", "written\n"],
        ["report", "done"],
      ],
    }],
  }], WORKERS_ONLY);
  const server = await serveForWorkers(root);
  try {
    await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await w1.saw(/t: agent .* starting/);
    // The network to w1 is cut: it neither heartbeats nor hears anything until it comes back.
    Deno.kill(w1.child.pid, "SIGSTOP");
    await using _w2 = startWorker(await workerClone(dir.path, bare, "w2"), server.url, "w2");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    await Deno.writeTextFile(go, "");
    Deno.kill(w1.child.pid, "SIGCONT");
    const refused = await w1.saw(/report refused/);
    // The run is over by now: the session's capability ended with it (while the run is live, the
    // same report is 409 lease_expired: tests/workers_security_test.ts).
    assert.match(refused, /HTTP 409 lease_expired|HTTP 401 .*its run ended/);
    const rows = await rowsOf(root, done.runId);
    assert.equal(rowsFor(rows, "task_merged", "t").length, 1, "landed once");
    const claims = rowsFor(rows, "task_claimed", "t");
    assert.deepEqual(claims.map((r) => r.data.worker), ["w1", "w2"]);
    // What landed is w2's session's commit.
    const exits = rowsFor(rows, "agent_exited", "t");
    assert.equal(exits.at(-1)!.data.worker, "w2");
    assert.equal(exits.at(-1)!.data.session_id, claims[1].data.session_id);
  } finally {
    await server.shutdown();
  }
});

Deno.test("two workers racing for one task: exactly one wins", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{ id: "only", script: [["sleep", 500], ["write", "o.txt", "o\n"], ["report", "ok"]] }],
  }], WORKERS_ONLY);
  const server = await serveForWorkers(root);
  try {
    const w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1", { slots: 4 });
    const w2 = startWorker(await workerClone(dir.path, bare, "w2"), server.url, "w2", { slots: 4 });
    await using _a = w1;
    await using _b = w2;
    const done = await runPlan({ root, server, app: SERVER_APP, out: () => {} });
    assert.equal(done.status, "completed");
    const rows = await rowsOf(root, done.runId);
    assert.equal(rowsFor(rows, "task_claimed", "only").length, 1);
    const started = [...w1.lines, ...w2.lines].filter((l) => /only: agent .* starting/.test(l));
    assert.equal(started.length, 1, "one worker started it");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a push the remote rejects fails that attempt with the remote's words; the next attempt lands", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{
      id: "t",
      script: [
        ["first_attempt", [["write", "forbidden.txt", "no\n"]]],
        ["retry", [["write", "ok.txt", "yes\n"]]],
        ["report", "done"],
      ],
    }],
  }], WORKERS_ONLY);
  const hook = join(bare, "hooks", "pre-receive");
  await Deno.writeTextFile(
    hook,
    `#!/bin/sh
while read old new ref; do
  case "$ref" in refs/heads/agent/*)
    if git cat-file -e "$new:forbidden.txt" 2>/dev/null; then
      echo "policy: forbidden.txt may not be pushed" >&2; exit 1
    fi;;
  esac
done
`,
  );
  await Deno.chmod(hook, 0o755);
  const server = await serveForWorkers(root);
  try {
    await using _w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const lines: string[] = [];
    const done = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    const [first] = rowsFor(rows, "agent_exited", "t");
    assert.equal(first.data.commit, null);
    assert.match(String(first.data.push_error), /forbidden\.txt may not be pushed/);
    const [failed] = rowsFor(rows, "task_verification_failed", "t");
    const [signal] = failed.data.signals as { kind: string; detail: string }[];
    assert.equal(signal.kind, "push_failed");
    assert.match(signal.detail, /worker w1 could not deliver agent\//);
    assert.ok(
      lines.some((l) => /forbidden\.txt may not be pushed/.test(l)),
      "the terminal says why",
    );
    assert.equal(await Deno.readTextFile(join(root, "ok.txt")), "yes\n");
    await assert.rejects(Deno.stat(join(root, "forbidden.txt")));
  } finally {
    await server.shutdown();
  }
});

/** A free loopback port (the restarted orchestrator serves on the same one). */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** `service run` as a child process; its output collected. */
function orchestratorProcess(root: string, port: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", String(port)],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out: string[] = [];
  const decoder = new TextDecoder();
  const read = async (s: ReadableStream<Uint8Array>) => {
    for await (const b of s) out.push(decoder.decode(b, { stream: true }));
  };
  const reading = Promise.all([read(child.stdout), read(child.stderr)]);
  return {
    child,
    text: () => out.join(""),
    async done() {
      const s = await child.status;
      await reading;
      return s.code;
    },
  };
}

Deno.test("an orchestrator restarted while a worker runs: the worker keeps its lease and reports to the new process", async () => {
  await using dir = await tempDir();
  const { root, bare, go } = await waitingTask(dir.path, {
    out: "made on w1\n",
    config: WORKERS_ONLY,
  });
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const first = orchestratorProcess(root, port);
  await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), url, "w1");
  await w1.saw(/t: agent .* starting/);
  first.child.kill("SIGKILL"); // the orchestrator's machine reboots
  await first.done();
  // Its terminal says the outage once, whatever its length, and says when it is over.
  await w1.saw(/worker w1: heartbeat of .* not delivered: .*; its agent goes on/);
  const second = orchestratorProcess(root, port);
  await until(
    "the new process adopted the remote session",
    () => Promise.resolve(/still runs on worker w1/.test(second.text())),
  );
  await w1.saw(/worker w1: heartbeat of .* delivered again: its lease holds/);
  assert.equal(w1.lines.filter((l) => /not delivered/.test(l)).length, 1, w1.lines.join("\n"));
  await Deno.writeTextFile(go, "");
  assert.equal(await second.done(), 0, second.text());
  const runId = /run (run-[A-Za-z0-9-]+)/.exec(second.text())![1];
  const rows = await rowsOf(root, runId);
  assert.equal(rowsFor(rows, "task_claimed", "t").length, 1, "no second attempt");
  const [exit] = rowsFor(rows, "agent_exited", "t");
  assert.equal(exit.data.worker, "w1");
  assert.equal(rowsFor(rows, "task_merged", "t").length, 1);
  assert.equal(await Deno.readTextFile(join(root, "out.txt")), "made on w1\n");
});

Deno.test("an orchestrator stopped gracefully while a worker runs: the session keeps its capability and reports to the next process", async () => {
  await using dir = await tempDir();
  const { root, bare, go } = await waitingTask(dir.path, {
    out: "made on w1\n",
    config: "max_agents: 0\nheartbeat_timeout_s: 6\n" + WORKER_AUTH_YAML,
  });
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const first = orchestratorProcess(root, port);
  await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), url, "w1");
  await w1.saw(/t: agent .* starting/);
  first.child.kill("SIGTERM"); // `service stop`, a rolling update of the orchestrator
  await first.done();
  const second = orchestratorProcess(root, port);
  await until(
    "the new process adopted the remote session",
    () => Promise.resolve(/still runs on worker w1/.test(second.text())),
  );
  // Two heartbeats of the worker reach the new process with the session's capability.
  await new Promise((r) => setTimeout(r, 4500));
  await Deno.writeTextFile(go, "");
  assert.equal(await second.done(), 0, second.text());
  const runId = /run (run-[A-Za-z0-9-]+)/.exec(second.text())![1];
  const rows = await rowsOf(root, runId);
  assert.equal(rowsFor(rows, "task_claimed", "t").length, 1, "no second attempt");
  assert.equal(rowsFor(rows, "task_merged", "t").length, 1);
  assert.deepEqual(w1.lines.filter((l) => /HTTP 40[13]|report refused/.test(l)), []);
  assert.ok(w1.lines.some((l) => /t: agent .* exited 0; reported commit/.test(l)));
  assert.equal(await Deno.readTextFile(join(root, "out.txt")), "made on w1\n");
});

Deno.test("a worker that dies after its agent reported, before its own report, loses the lease; the task runs again", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{
      id: "t",
      script: [
        ["write", "out.txt", "done\n"],
        ["report", "done"],
        // The first attempt's agent lingers after its report: its worker dies meanwhile.
        ["first_attempt", [["sleep", 8000]]],
      ],
    }],
  }], WORKERS_ONLY);
  const server = await serveForWorkers(root);
  try {
    await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await w1.saw(/t: agent .* starting/);
    await until("t reported", async () => {
      const t = await (await fetch(`${server.url}/tasks/t`, { headers: WORKER_READ })).json();
      return t.status === "DONE";
    });
    await w1.kill();
    await using _w2 = startWorker(await workerClone(dir.path, bare, "w2"), server.url, "w2");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    assert.deepEqual(rowsFor(rows, "task_claimed", "t").map((r) => r.data.worker), ["w1", "w2"]);
    const [failed] = rowsFor(rows, "task_verification_failed", "t");
    assert.match(
      JSON.stringify(failed.data),
      /worker w1 stopped heartbeating after its agent reported/,
    );
    assert.equal(rowsFor(rows, "task_merged", "t").length, 1);
  } finally {
    await server.shutdown();
  }
});

Deno.test("the network to a worker cut and restored within its lease: heartbeats resume, nothing is retried", async () => {
  await using dir = await tempDir();
  const { root, bare, go } = await waitingTask(dir.path, {
    out: "once\n",
    config: "max_agents: 0\nheartbeat_timeout_s: 6\n" + WORKER_AUTH_YAML,
  });
  const server = await serveForWorkers(root);
  try {
    await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const result = runPlan({ root, server, app: SERVER_APP, out: () => {} });
    await w1.saw(/t: agent .* starting/);
    Deno.kill(w1.child.pid, "SIGSTOP");
    await new Promise((r) => setTimeout(r, 1500));
    Deno.kill(w1.child.pid, "SIGCONT");
    await Deno.writeTextFile(go, "");
    const done = await result;
    assert.equal(done.status, "completed");
    const rows = await rowsOf(root, done.runId);
    assert.equal(rowsFor(rows, "task_claimed", "t").length, 1, "one attempt");
    assert.equal(rowsFor(rows, "task_retried", "t").length, 0);
    assert.equal(rowsFor(rows, "task_merged", "t").length, 1);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a task a worker finishes without changing anything lands like a local one: nothing to push, nothing lost", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{ id: "noop", script: [["print", "nothing to change"], ["report", "already fine"]] }],
  }], WORKERS_ONLY);
  const server = await serveForWorkers(root);
  try {
    await using _w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const lines: string[] = [];
    const done = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    const [exit] = rowsFor(rows, "agent_exited", "noop");
    assert.equal(exit.data.commit, null);
    assert.equal(rowsFor(rows, "task_claimed", "noop").length, 1);
    assert.deepEqual(await agentBranches(bare), [], "nothing was pushed");
  } finally {
    await server.shutdown();
  }
});

Deno.test("in pull-request mode a worker's pushed branch becomes the pull request the host merges", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "orchestrator");
  await Deno.mkdir(root);
  await workspace(root, [{
    name: "s",
    steps: [{ id: "f", script: [["write", "f.txt", "from a worker\n"], ["report", "wrote f"]] }],
  }]);
  await using fake = await startFakeGithub(root, {});
  await sh(root, "remote", "add", "origin", fake.bare);
  await sh(root, "push", "-q", "origin", "main");
  using _token = withEnv({ WORKERS_GH_TOKEN: "gh-token" });
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `${WORKERS_ONLY}landing:\n  mode: pull_request\n  provider: github\n  api_url: ${fake.url}\n` +
      "  repo: acme/widget\n  token_env: WORKERS_GH_TOKEN\n  poll_interval_s: 1\n",
    { append: true },
  );
  const server = await serveForWorkers(root);
  try {
    await using _w1 = startWorker(await workerClone(dir.path, fake.bare, "w1"), server.url, "w1");
    const lines: string[] = [];
    const done = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    assert.equal(rowsFor(rows, "task_claimed", "f")[0].data.worker, "w1");
    assert.equal(rowsFor(rows, "task_pr_opened", "f").length, 1);
    assert.equal(await sh(fake.bare, "show", "main:f.txt"), "from a worker\n");
    assert.deepEqual(await fake.refusedPushes(), [], "nothing was pushed to main");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a worker paused past its lease on the task's last attempt is refused when it comes back: the given-up task takes none of its work", async () => {
  await using dir = await tempDir();
  const go = join(dir.path, "go");
  const hold = join(dir.path, "hold");
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [
      {
        id: "t",
        script: [
          ["run", `while [ ! -f ${go} ]; do sleep 0.1; done`],
          ["write", "out.txt", "stale\n"],
          ["report", "done"],
        ],
      },
      // Keeps the run live (on another worker) until the paused worker has spoken.
      {
        id: "keep",
        role: "docs",
        script: [["run", `while [ ! -f ${hold} ]; do sleep 0.1; done`], ["report", "kept"]],
      },
    ],
  }], WORKERS_ONLY);
  const server = await serveForWorkers(root);
  try {
    await using _wk = startWorker(await workerClone(dir.path, bare, "wk"), server.url, "wk", {
      roles: "docs",
    });
    await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1", {
      roles: "backend",
    });
    const result = runPlan({ root, server, app: SERVER_APP, out: () => {} });
    const task = async () =>
      await (await fetch(`${server.url}/tasks/t`, { headers: WORKER_READ })).json();
    for (const attempt of [1, 2, 3]) {
      await w1.saw(new RegExp(`t: agent .* starting \\(attempt ${attempt}`));
      const held = (await task()).session_id;
      // Its network is cut for longer than the lease.
      Deno.kill(w1.child.pid, "SIGSTOP");
      await until(`attempt ${attempt}'s lease ran out`, async () => {
        const t = await task();
        return t.status === (attempt < 3 ? "OPEN" : "FAILED") || t.session_id !== held;
      });
      if (attempt === 3) await Deno.writeTextFile(go, "");
      Deno.kill(w1.child.pid, "SIGCONT");
    }
    const refused = await w1.saw(/report refused/);
    await until(
      "the third attempt's report was answered",
      () => Promise.resolve(w1.lines.filter((l) => /t: report refused/.test(l)).length === 3),
    );
    assert.match(
      w1.lines.filter((l) => /t: report refused/.test(l))[2],
      /HTTP 409 lease_expired: task t is no longer held by session .* \(it is FAILED\)/,
      refused,
    );
    await Deno.writeTextFile(hold, "");
    const done = await result;
    assert.equal(done.status, "failed");
    const rows = await rowsOf(root, done.runId);
    assert.equal(rowsFor(rows, "agent_exited", "t").length, 3, "three lost leases, no more");
    assert.equal(rowsFor(rows, "task_merged", "t").length, 0);
    await assert.rejects(Deno.stat(join(root, "out.txt")), Deno.errors.NotFound);
  } finally {
    await server.shutdown();
  }
});

Deno.test("two machines given one --name: the second waits and says why, and never takes the first's running task as if it had restarted", async () => {
  await using dir = await tempDir();
  const { root, bare, go } = await waitingTask(dir.path, {
    out: "from the first\n",
    config: "max_agents: 0\nheartbeat_timeout_s: 9\n" + WORKER_AUTH_YAML,
  });
  const server = await serveForWorkers(root);
  try {
    await using first = startWorker(await workerClone(dir.path, bare, "m1"), server.url, "box");
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await first.saw(/t: agent .* starting/);
    await using second = startWorker(await workerClone(dir.path, bare, "m2"), server.url, "box");
    const refused = await second.saw(/worker box is running elsewhere/);
    assert.match(refused, /renewed session\(s\) s-\S+ within the last heartbeat/);
    assert.match(refused, /give each machine its own --name/);
    assert.doesNotMatch(lines.join("\n"), /restarted/);
    await Deno.writeTextFile(go, "");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    assert.equal(rowsFor(rows, "task_claimed", "t").length, 1, "one attempt, the first's");
    assert.equal(await Deno.readTextFile(join(root, "out.txt")), "from the first\n");
    assert.equal(second.lines.filter((l) => /running elsewhere/.test(l)).length, 1, "said once");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a worker stopped twice while no orchestrator answers its report exits, leaving the session for its next process to hand back", async () => {
  await using dir = await tempDir();
  const { root, bare, go } = await waitingTask(dir.path, {
    out: "done\n",
    config: WORKERS_ONLY,
    first: ["first.txt", "kept\n"],
  });
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const first = orchestratorProcess(root, port);
  const clone = await workerClone(dir.path, bare, "w1");
  await using w1 = startWorker(clone, url, "w1", { args: ["--drain-timeout", "1"] });
  await w1.saw(/t: agent .* starting/);
  // Its agent has work to keep (on a loaded machine the drain could end it before it wrote any).
  const trees = join(clone, ".sdd/worktrees");
  await until("the agent wrote first.txt", async () => {
    const names = await Array.fromAsync(Deno.readDir(trees)).catch(() => []);
    const wrote = await Promise.all(
      names.map((e) => Deno.stat(join(trees, e.name, "first.txt")).then(() => true, () => false)),
    );
    return wrote.includes(true);
  });
  first.child.kill("SIGKILL"); // the orchestrator is gone for good meanwhile
  await first.done();
  Deno.kill(w1.child.pid, "SIGTERM"); // `systemctl stop`: it drains, then reports
  await w1.saw(/t: report not taken yet/);
  Deno.kill(w1.child.pid, "SIGTERM"); // stopped again: it does not wait for an orchestrator
  const exited = await Promise.race([
    w1.exited(),
    new Promise<string>((r) => setTimeout(() => r("still running"), 30_000)),
  ]);
  assert.equal(exited, 0, w1.lines.join("\n"));
  const given = w1.lines.find((l) => /t: report of .* given up/.test(l));
  assert.match(
    given ?? "",
    /no orchestrator answers .*its work is on agent\/s-\S+ at [0-9a-f]{12}/,
  );
  // Its next process on this clone hands the session back to the next run, which goes on from
  // the work it pushed; no attempt is counted.
  const second = orchestratorProcess(root, port);
  await using w1b = startWorker(clone, url, "w1");
  await w1b.saw(/handed back session s-\S+ of t/);
  await Deno.writeTextFile(go, "");
  assert.equal(await second.done(), 0, second.text());
  assert.equal(await Deno.readTextFile(join(root, "first.txt")), "kept\n");
  assert.equal(await Deno.readTextFile(join(root, "out.txt")), "done\n");
});
