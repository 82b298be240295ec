/**
 * Remote workers as a team runs them every day (issue 35), on loopback: an orchestrator with
 * `max_agents: 0` and real `service worker` processes, each with its own clone of a shared bare
 * remote, the scripted agent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { CLI, rowsOf, sh, until, withEnv, workspace } from "./_e2e.ts";
import {
  serveForWorkers,
  sharedRemote,
  startWorker,
  WORKER_AUTH_YAML,
  WORKER_TOKENS,
  workerClone,
} from "./_workers.ts";
import { IMAGE_AGENT, skipping, testImage } from "./_container_image.ts";

// A run takes remote workers only with a worker token configured (lib/workers/admission.ts).
const WORKERS_ONLY = "max_agents: 0\nheartbeat_timeout_s: 3\n" + WORKER_AUTH_YAML;

/** `service doctor --json` in `root` with only `env`; its checks. */
async function doctor(root: string, env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "doctor", "--json"],
    env: { ...env, NO_COLOR: "1", RUST_BACKTRACE: "0", SERVICE_PORT: "0" },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  return (JSON.parse(new TextDecoder().decode(out.stdout)).checks as {
    name: string;
    ok: boolean;
    detail: string;
  }[]);
}

/** A workers-only workspace of three tasks, a, b and c, each writing its own file. */
function threeTasks(dir: string) {
  return sharedRemote(dir, [{
    name: "s",
    steps: ["a", "b", "c"].map((id) => ({
      id,
      script: [["write", `${id}.txt`, `${id}\n`], ["report"]],
    })),
  }], WORKERS_ONLY);
}

Deno.test("max_agents: 0 — doctor and run need neither the agent CLI nor its provider key on the orchestrator; a worker runs the task", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{ id: "a", script: [["write", "a.txt", "a\n"], ["report", "a done"]] }],
  }], WORKERS_ONLY);
  const clone = await workerClone(dir.path, bare, "w1");
  // The orchestrator's machine has no agent CLI: its own service.yaml names one it lacks.
  const yaml = await Deno.readTextFile(join(root, "service.yaml"));
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    yaml.replace(/^cli_command: .*$/m, 'cli_command: ["no-such-agent-cli"]'),
  );
  const checks = await doctor(root, { PATH: Deno.env.get("PATH")!, HOME: root });
  const agent = checks.filter((c) => c.name.startsWith("agent cli") || c.name === "api key");
  assert.ok(agent.length > 0 && agent.every((c) => c.ok), JSON.stringify(agent));
  assert.match(agent[0].detail, /max_agents: 0/);

  const server = await serveForWorkers(root);
  try {
    await using w1 = startWorker(clone, server.url, "w1");
    const lines: string[] = [];
    const result = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    assert.equal(result.status, "completed", lines.join("\n"));
    assert.ok(lines.some((l) => /max_agents: 0: every task runs on a remote worker/.test(l)));
    const rows = await rowsOf(root, result.runId);
    const claim = rows.find((r) => r.type === "task_claimed");
    assert.equal(claim?.data.worker, "w1");
    await w1.saw(/a: agent .* exited 0; reported commit/);
  } finally {
    await server.shutdown();
  }
});

Deno.test("max_agents: 0 with claude and no provider key on the orchestrator: doctor passes its agent checks", async () => {
  await using ws = await tempDir();
  await Deno.writeTextFile(
    join(ws.path, "service.yaml"),
    "cli: claude\nmax_agents: 0\nroles: [qa]\n" + WORKER_AUTH_YAML,
  );
  const checks = await doctor(ws.path, { PATH: "/usr/bin:/bin", HOME: ws.path });
  const agent = checks.filter((c) =>
    c.name.startsWith("agent cli") || c.name === "api key" || c.name === "headless start"
  );
  assert.ok(agent.length > 0 && agent.every((c) => c.ok), JSON.stringify(agent));
});

Deno.test("a task the heartbeat monitor ORPHANs is said with its [ Ns] time stamp, like every other line of the run", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [{ id: "a", script: [["report"]] }],
    }],
    "max_agents: 0\nheartbeat_timeout_s: 1\n" + WORKER_AUTH_YAML +
      "    - {principal: ops, scope: operator, token_env: TEAM_E2E_OPS_TOKEN}\n",
  );
  using _env = withEnv({ TEAM_E2E_OPS_TOKEN: "team-e2e-ops" });
  const lines: string[] = [];
  const stop = new AbortController();
  let url = "";
  const result = runPlan({
    root: dir.path,
    port: 0,
    app: SERVER_APP,
    signal: stop.signal,
    out: (l) => {
      lines.push(l);
      url ||= /review board .*: (http:\/\/[^/]+)\//.exec(l)?.[1] ?? "";
    },
  });
  await until("the run's address", () => Promise.resolve(url !== ""));
  // A claimant through the task API that never heartbeats (an operator's: a worker token takes
  // no task of a run there, lib/workers/task_api_guard.ts).
  const claimed = await fetch(`${url}/tasks/a/claim`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer team-e2e-ops" },
    body: JSON.stringify({ session_id: "outsider-1" }),
  });
  assert.equal(claimed.status, 200, await claimed.text());
  await until("the ORPHANED line", () => Promise.resolve(lines.some((l) => /ORPHANED/.test(l))));
  stop.abort();
  await result;
  const line = lines.find((l) => /ORPHANED/.test(l))!;
  assert.match(line, /^\[\s*\d+s\] task a ORPHANED: no heartbeat from session outsider-1$/);
});

Deno.test("a finished run leaves no refs/service/base/<run> nor agent/* branches of its sessions on the remote; another run's and a person's stay", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [
      {
        id: "a",
        script: [
          ["first_attempt", [["write", "a.txt", "half\n"], ["exit", 1]]],
          ["retry", [["write", "a.txt", "a\n"], ["report"]]],
        ],
      },
      { id: "b", script: [["write", "b.txt", "b\n"], ["report"]] },
    ],
  }], WORKERS_ONLY);
  // Someone else's branches on the same remote.
  await sh(root, "push", "-q", "origin", "HEAD:refs/heads/agent/someone-elses");
  await sh(root, "push", "-q", "origin", "HEAD:refs/service/base/run-of-another-team");
  const server = await serveForWorkers(root);
  try {
    await using _w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const lines: string[] = [];
    const result = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    assert.equal(result.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, result.runId);
    assert.ok(rows.filter((r) => r.type === "task_claimed").length >= 3, "a failed attempt too");
    const refs = (await sh(bare, "for-each-ref", "--format=%(refname)")).trim().split("\n");
    assert.deepEqual(
      refs.filter((r) => r.startsWith("refs/service/") || r.startsWith("refs/heads/agent/")).sort(),
      ["refs/heads/agent/someone-elses", "refs/service/base/run-of-another-team"],
    );
    assert.ok(lines.some((l) => /removed from origin: \d+ ref\(s\) of this run/.test(l)));
  } finally {
    await server.shutdown();
  }
});

/** The orchestrator's `service workers --json` (its live server, else its file). */
async function workersOf(root: string) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "workers", "--json"],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, text + new TextDecoder().decode(out.stderr));
  return JSON.parse(text).workers as {
    name: string;
    state: string;
    failures_total: number;
    cordoned?: { reason: string; by: string };
    adapters?: { name: string; ready: boolean; problem?: string; isolation?: string }[];
  }[];
}

Deno.test("a worker that cannot start the adapter says so at registration and claims nothing; the healthy worker runs every task, no attempt burnt", async () => {
  await using dir = await tempDir();
  const { root, bare } = await threeTasks(dir.path);
  // The broken machine's clone names an agent CLI it does not have.
  const broken = await workerClone(dir.path, bare, "broken");
  const yaml = await Deno.readTextFile(join(broken, "service.yaml"));
  await Deno.writeTextFile(
    join(broken, "service.yaml"),
    yaml.replace(/^cli_command: .*$/m, 'cli_command: ["no-such-agent-cli"]'),
  );
  const server = await serveForWorkers(root);
  try {
    await using bad = startWorker(broken, server.url, "broken", { slots: 3 });
    await bad.saw(/worker broken: registered with/);
    await using _good = startWorker(await workerClone(dir.path, bare, "good"), server.url, "good");
    const lines: string[] = [];
    const result = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    assert.equal(result.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, result.runId);
    const claims = rows.filter((r) => r.type === "task_claimed");
    assert.deepEqual(claims.map((c) => c.data.worker), ["good", "good", "good"]);
    assert.ok(claims.every((c) => c.data.isolation === "worktree"), "where each agent ran");
    assert.ok(
      bad.lines.some((l) => /worker broken: cannot start generic: .*no-such-agent-cli/.test(l)),
      bad.lines.join("\n"),
    );
    const workers = await workersOf(root);
    const b = workers.find((w) => w.name === "broken")!;
    assert.equal(b.adapters?.[0].ready, false);
    assert.match(b.adapters?.[0].problem ?? "", /no-such-agent-cli/);
    assert.equal(workers.find((w) => w.name === "good")?.adapters?.[0].ready, true);
  } finally {
    await server.shutdown();
  }
});

Deno.test("an agent that did not start on a worker costs no attempt: the task goes to another worker, and 3 in a row cordon the worker with the reason", async () => {
  await using dir = await tempDir();
  const { root, bare } = await threeTasks(dir.path);
  // Its CLI is there when it registers, and gone when it starts agents.
  const flakyClone = await workerClone(dir.path, bare, "flaky");
  const cliPath = join(dir.path, "vanishing-agent");
  await Deno.writeTextFile(cliPath, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const yaml = await Deno.readTextFile(join(flakyClone, "service.yaml"));
  await Deno.writeTextFile(
    join(flakyClone, "service.yaml"),
    yaml.replace(/^cli_command: .*$/m, `cli_command: [${JSON.stringify(cliPath)}]`),
  );
  const server = await serveForWorkers(root);
  try {
    await using flaky = startWorker(flakyClone, server.url, "flaky");
    await flaky.saw(/worker flaky: registered with/);
    await Deno.remove(cliPath);
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await until(
      "flaky cordoned",
      () =>
        Promise.resolve(lines.some((l) => /worker flaky is cordoned: 3 agents in a row/.test(l))),
    ).catch((e) => {
      throw new Error(`${e.message}\n${lines.join("\n")}\n--- flaky:\n${flaky.lines.join("\n")}`);
    });
    await using _good = startWorker(await workerClone(dir.path, bare, "good"), server.url, "good");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    const onFlaky = rows.filter((r) => r.type === "agent_exited" && r.data.worker === "flaky");
    assert.equal(onFlaky.length, 3);
    assert.ok(onFlaky.every((r) => typeof r.data.start_failure === "string"));
    assert.equal(rows.filter((r) => r.type === "task_failed").length, 0);
    assert.ok(
      rows.some((r) =>
        r.type === "task_retried" &&
        /the agent did not start on worker flaky: .*no attempt counted/.test(String(r.data.reason))
      ),
    );
    // Each task's attempt on the good worker is its first counted one.
    for (const id of ["a", "b", "c"]) {
      const merged = rows.filter((r) => r.type === "task_merged" && r.data.task_id === id);
      assert.equal(merged.length, 1);
    }
    assert.ok(
      lines.some((l) => /on worker good \(backend, attempt 2, counted as 1 of 3\)/.test(l)),
      lines.join("\n"),
    );
    const workers = await workersOf(root);
    const f = workers.find((w) => w.name === "flaky")!;
    assert.equal(f.failures_total, 3);
    assert.match(f.cordoned?.reason ?? "", /3 agents in a row did not start on it/);
    assert.equal(f.cordoned?.by, "service");
  } finally {
    await server.shutdown();
  }
});

/** `service run` in this process with its own server on `port` (0: a free one); its lines. */
function ownRun(root: string, port = 0, signal?: AbortSignal) {
  const run = { url: "", lines: [] as string[] };
  const result = runPlan({
    root,
    port,
    app: SERVER_APP,
    signal,
    out: (l) => {
      run.lines.push(l);
      run.url ||= /review board .*: (http:\/\/[^/]+)\//.exec(l)?.[1] ?? "";
    },
  });
  return Object.assign(run, { result });
}

Deno.test("service stop while a remote agent reports costs no attempt: its pushed work is kept and the resumed run lands the task", async () => {
  await using dir = await tempDir();
  const flag = join(dir.path, "go");
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{
      id: "a",
      script: [
        ["write", "a.txt", "a\n"],
        ["run", `while [ ! -f ${flag} ]; do sleep 0.1; done`],
        ["report", "a done"],
      ],
    }],
  }], "max_agents: 0\nheartbeat_timeout_s: 30\n" + WORKER_AUTH_YAML);
  const stop = new AbortController();
  const first = ownRun(root, 0, stop.signal);
  await until("the run's address", () => Promise.resolve(first.url !== ""));
  const port = Number(new URL(first.url).port);
  await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), first.url, "w1");
  await w1.saw(/a: agent .* starting/);
  await until(
    "the agent at work",
    () => Promise.resolve(first.lines.some((l) => /a: agent .* started on worker w1/.test(l))),
  );
  stop.abort(); // `service stop`: the run ends, its server with it
  assert.equal((await first.result).status, "stopped");
  await Deno.writeTextFile(flag, ""); // the agent reports now: nobody answers
  await w1.saw(/a: agent .* ended while no orchestrator answered \(a stop\)/);
  const resumed = ownRun(root, port);
  const result = await resumed.result;
  assert.equal(result.status, "completed", resumed.lines.join("\n"));
  const rows = await rowsOf(root, result.runId);
  assert.equal(rows.filter((r) => r.type === "task_failed").length, 0);
  const exited = rows.find((r) => r.type === "agent_exited" && r.data.interrupted === "stop");
  assert.ok(exited, "the stop is journaled as the agent's end");
  assert.ok(
    rows.some((r) =>
      r.type === "task_retried" &&
      /while the run was stopped; a new attempt continues from the work it pushed \(no attempt counted\)/
        .test(String(r.data.reason))
    ),
  );
  assert.ok(
    resumed.lines.some((l) => /attempt 2, counted as 1 of 3/.test(l)),
    resumed.lines.join("\n"),
  );
  assert.equal(await Deno.readTextFile(join(root, "a.txt")).catch(() => ""), "a\n");
});

Deno.test("a worker restarted after kill -9 hands its dead process's session back at once: no attempt counted, no wait for the lease, its worktree and PID file gone", async () => {
  await using dir = await tempDir();
  const flag = join(dir.path, "go");
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{
      id: "a",
      script: [
        ["write", "a.txt", "a\n"],
        ["run", `while [ ! -f ${flag} ]; do sleep 0.1; done`],
        ["report", "a done"],
      ],
    }],
  }], "max_agents: 0\nheartbeat_timeout_s: 60\n" + WORKER_AUTH_YAML);
  const clone = await workerClone(dir.path, bare, "w1");
  const server = await serveForWorkers(root);
  try {
    const first = startWorker(clone, server.url, "w1");
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await first.saw(/a: agent (\S+) starting/);
    const session = /a: agent (\S+) starting/.exec(
      first.lines.find((l) => /starting/.test(l))!,
    )![1];
    // Its PID file and its agent's work in the worktree: the work the restarted worker pushes.
    const there = (p: string) => Deno.stat(p).then(() => true, () => false);
    await until(
      "its PID file and its agent's write",
      async () =>
        await there(join(clone, ".sdd/runtime/pids", `${session}.json`)) &&
        await there(join(clone, ".sdd/worktrees", session, "a.txt")),
    );
    await first.kill(); // the machine's worker dies, and its agent with it (its tether)
    const killedAt = Date.now();
    await using again = startWorker(clone, server.url, "w1");
    await again.saw(/worker w1: handed back session .* of a \(its work pushed at [0-9a-f]{12}\)/);
    await until(
      "the lease taken back",
      () => Promise.resolve(lines.some((l) => /a: worker w1 restarted/.test(l))),
    );
    assert.ok(Date.now() - killedAt < 30_000, "well before the 60 s lease ran out");
    await Deno.writeTextFile(flag, "");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    assert.ok(
      rows.some((r) =>
        r.type === "task_retried" &&
        /worker w1 restarted and handed its session back; a new attempt continues from the work it pushed \(no attempt counted\)/
          .test(String(r.data.reason))
      ),
      lines.join("\n"),
    );
    assert.ok(
      lines.some((l) => /attempt 2, counted as 1 of 3/.test(l)),
      lines.join("\n"),
    );
    const gone = async (p: string) => await Deno.stat(p).then(() => false, () => true);
    assert.ok(await gone(join(clone, ".sdd/worktrees", session)), "its worktree is gone");
    assert.ok(await gone(join(clone, ".sdd/runtime/pids", `${session}.json`)), "its PID file too");
  } finally {
    await server.shutdown();
  }
});

Deno.test("a worker pointed at a server that cannot prove it is its orchestrator refuses to join and never sends its token", async () => {
  await using dir = await tempDir();
  const { bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{ id: "a", script: [["report"]] }],
  }], WORKERS_ONLY);
  // (1) Any other program on that port: it hears no token.
  const seen: (string | null)[] = [];
  const other = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(req.headers.get("authorization"));
    return Response.json({ message: "not here" }, { status: 404 });
  });
  try {
    await using w = startWorker(
      await workerClone(dir.path, bare, "w1"),
      `http://127.0.0.1:${other.addr.port}`,
      "w1",
      { env: { SERVICE_TOKEN: "secret-worker-token" } },
    );
    assert.equal(await w.child.status.then((s) => s.code), 1);
    await w.saw(/will not join .*GET \/workers\/hello with HTTP 404.*its token was not sent/);
    assert.ok(seen.length > 0);
    assert.deepEqual(seen.filter((h) => h !== null), [], "no request carried the token");
  } finally {
    await other.shutdown();
  }
  // (2) Another team's orchestrator on this machine (another repository): not joined either.
  await using otherTeam = await tempDir();
  await workspace(otherTeam.path, [{ name: "s", steps: [{ id: "x", script: [["report"]] }] }]);
  const theirs = await serveForWorkers(otherTeam.path);
  try {
    await using w2 = startWorker(await workerClone(dir.path, bare, "w2"), theirs.url, "w2");
    assert.equal(await w2.child.status.then((s) => s.code), 1);
    await w2.saw(/will not join .*it serves another repository than this clone's/);
    assert.deepEqual(
      JSON.parse(
        await Deno.readTextFile(join(otherTeam.path, ".sdd/runtime/workers.json"))
          .catch(() => '{"workers":[]}'),
      ).workers,
      [],
      "it never registered there",
    );
  } finally {
    await theirs.shutdown();
  }
});

Deno.test("with max_agents: 0 and no worker connected the run says so, and each ready task waits for one; a worker that connects runs them", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{ id: "a", script: [["report"]] }, { id: "b", script: [["report"]] }],
  }], WORKERS_ONLY);
  const server = await serveForWorkers(root);
  try {
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await until(
      "the run to say no worker is connected",
      () => Promise.resolve(lines.some((l) => /no worker connected \(2 tasks ready\)/.test(l))),
    );
    // The run state is written after the line is said (one write at a time): wait for it.
    const waitOfA = async () =>
      String(
        JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")))
          .waiting?.a,
      );
    await until(
      "the run state to say why a waits",
      async () => /waiting for a worker: none is connected/.test(await waitOfA()),
    ).catch(async (e) => {
      throw new Error(`${(e as Error).message}: ${await waitOfA()}`);
    });
    await using _w = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    assert.ok(
      rows.some((r) =>
        r.type === "task_waiting" && /none is connected/.test(String(r.data.reason))
      ),
      "the wait is journaled",
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("service workers: lists a worker with its slots and heartbeat; cordon holds its tasks back (the wait says so), uncordon releases them, drain ends it", async () => {
  await using dir = await tempDir();
  const flag = join(dir.path, "go");
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [
      { id: "a", script: [["write", "a.txt", "a\n"], ["report"]] },
      { id: "b", script: [["run", `while [ ! -f ${flag} ]; do sleep 0.1; done`], ["report"]] },
    ],
  }], WORKERS_ONLY + `    - {principal: operator, scope: operator, token_env: ${TEAM_OP_ENV}}\n`);
  // With tokens configured, `service workers` cordons and drains with an operator's token.
  // Its own variable only: SERVICE_TOKEN goes to the CLI's process alone (cliIn).
  using _env = withEnv({ [TEAM_OP_ENV]: TEAM_OP_TOKEN });
  const server = await serveForWorkers(root, [
    ...WORKER_TOKENS,
    { principal: "operator", scope: "operator", token_env: TEAM_OP_ENV },
  ]);
  try {
    await using w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1", {
      slots: 2,
    });
    await w1.saw(/registered with/);
    const cordoned = await cliIn(root, "workers", "cordon", "w1", "--reason", "disk full");
    assert.equal(cordoned.code, 0, cordoned.out);
    assert.match(cordoned.out, /worker w1: cordoned by .*: disk full/);
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await until("the cordon's wait", async () => {
      const state = JSON.parse(
        await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")).catch(() => "{}"),
      );
      return /the 1 connected worker is cordoned or draining/.test(String(state.waiting?.a));
    });
    const listed = await cliIn(root, "workers");
    assert.match(listed.out, /^w1\s+2\s+\d\s+0\s+cordoned\s+\d+ s ago\s+0\s+generic$/m);
    assert.match(listed.out, /w1: cordoned by .*: disk full/);
    assert.equal((await cliIn(root, "workers", "uncordon", "w1")).code, 0);
    await until("a landed", () => Promise.resolve(lines.some((l) => /a: merged as/.test(l))))
      .catch((e) => {
        throw new Error(`${e.message}\nrun:\n${lines.join("\n")}\nw1:\n${w1.lines.join("\n")}`);
      });
    const drained = await cliIn(root, "workers", "drain", "w1");
    assert.match(drained.out, /worker w1: draining/);
    await w1.saw(/worker w1: drained by an operator; claiming nothing more/);
    await Deno.writeTextFile(flag, "");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    assert.equal(await w1.child.status.then((s) => s.code), 0, "it exits once its agent is done");
  } finally {
    await server.shutdown();
  }
});

const TEAM_OP_ENV = "TEAM_E2E_OPERATOR_TOKEN";
const TEAM_OP_TOKEN = "team-e2e-operator";

/** The CLI in `root`: exit code and output. */
async function cliIn(root: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", SERVICE_TOKEN: TEAM_OP_TOKEN },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return {
    code: out.code,
    out: new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr),
  };
}

Deno.test("a run resumed after a stop lands what a worker's agent finished meanwhile, though main moved since the agent's claim", async () => {
  await using dir = await tempDir();
  const flag = join(dir.path, "go");
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [
      { id: "a", script: [["write", "a.txt", "a\n"], ["report"]] },
      {
        id: "b",
        script: [
          ["write", "b.txt", "b\n"],
          ["run", `while [ ! -f ${flag} ]; do sleep 0.1; done`],
          ["report"],
        ],
      },
    ],
  }], "max_agents: 0\nheartbeat_timeout_s: 30\n" + WORKER_AUTH_YAML);
  const stop = new AbortController();
  const first = ownRun(root, 0, stop.signal);
  await until("the run's address", () => Promise.resolve(first.url !== ""));
  const port = Number(new URL(first.url).port);
  await using _w1 = startWorker(await workerClone(dir.path, bare, "w1"), first.url, "w1", {
    slots: 2,
  });
  // a lands (main moves) while b's agent works on from the older main.
  await until("a merged", () => Promise.resolve(first.lines.some((l) => /a: merged as/.test(l))));
  stop.abort();
  assert.equal((await first.result).status, "stopped");
  const resumed = ownRun(root, port);
  await until(
    "b adopted",
    () => Promise.resolve(resumed.lines.some((l) => /b: agent .* still runs on worker w1/.test(l))),
  );
  await Deno.writeTextFile(flag, "");
  const result = await resumed.result;
  assert.equal(result.status, "completed", resumed.lines.join("\n"));
  const rows = await rowsOf(root, result.runId);
  assert.equal(rows.filter((r) => r.type === "task_retried").length, 0, resumed.lines.join("\n"));
  assert.ok(!resumed.lines.some((l) => /does not descend from the claim's base/.test(l)));
  assert.equal(await Deno.readTextFile(join(root, "b.txt")), "b\n");
});

const image = await testImage();

Deno.test({
  name:
    "a worker that runs its agents in podman containers: each remote claim records the container it ran in, beside the worker",
  ignore: skipping(image),
  async fn() {
    await using dir = await tempDir();
    const { root, bare } = await sharedRemote(dir.path, [{
      name: "s",
      steps: [{ id: "a", script: [["write", "a.txt", "a\n"], ["report"]] }],
    }], WORKERS_ONLY);
    const clone = await workerClone(dir.path, bare, "box-2");
    const yaml = await Deno.readTextFile(join(clone, "service.yaml"));
    await Deno.writeTextFile(
      join(clone, "service.yaml"),
      yaml.replace(
        /^cli_command: .*$/m,
        `cli_command: ${JSON.stringify(["deno", "run", "-A", IMAGE_AGENT])}`,
      ) +
        `isolation: container\nmemory_mb: 256\ncpu_cores: 1\ncontainer:\n  image: ${
          image.ok ? image.ref : ""
        }\n`,
    );
    const server = await serveForWorkers(root);
    try {
      const env = Object.fromEntries(
        ["XDG_RUNTIME_DIR", "DBUS_SESSION_BUS_ADDRESS"].flatMap((k) => {
          const v = Deno.env.get(k);
          return v ? [[k, v]] : [];
        }),
      );
      await using _w = startWorker(clone, server.url, "box-2", { env });
      const lines: string[] = [];
      const result = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
      assert.equal(result.status, "completed", lines.join("\n"));
      const claim = (await rowsOf(root, result.runId)).find((r) => r.type === "task_claimed")!;
      assert.equal(claim.data.worker, "box-2");
      assert.match(String(claim.data.isolation), /^container:podman:[0-9a-f]{12,}$/);
    } finally {
      await server.shutdown();
    }
  },
});

Deno.test("a worker that cannot fetch from its git remote costs no task an attempt: its claims go back, and 3 in a row cordon it with git's words", async () => {
  await using dir = await tempDir();
  const { root, bare } = await threeTasks(dir.path);
  // Its remote is out of reach (a network cut, a revoked deploy key).
  const cutClone = await workerClone(dir.path, bare, "cut");
  await sh(cutClone, "remote", "set-url", "origin", join(dir.path, "unreachable.git"));
  const server = await serveForWorkers(root);
  try {
    await using cut = startWorker(cutClone, server.url, "cut");
    await cut.saw(/worker cut: registered with/);
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await until(
      "cut cordoned",
      () => Promise.resolve(lines.some((l) => /worker cut is cordoned: 3 agents in a row/.test(l))),
    ).catch((e) => {
      throw new Error(`${e.message}\n${lines.join("\n")}\n--- cut:\n${cut.lines.join("\n")}`);
    });
    await using _good = startWorker(await workerClone(dir.path, bare, "good"), server.url, "good");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    assert.equal(rows.filter((r) => r.type === "task_failed").length, 0);
    const onCut = rows.filter((r) => r.type === "agent_exited" && r.data.worker === "cut");
    assert.equal(onCut.length, 3);
    for (const r of onCut) {
      assert.match(
        String(r.data.start_failure),
        /could not fetch the run's base from origin: git fetch origin refs\/service\/base\/\S+ failed/,
      );
    }
    for (const id of ["a", "b", "c"]) {
      assert.equal(rows.filter((r) => r.type === "task_merged" && r.data.task_id === id).length, 1);
    }
  } finally {
    await server.shutdown();
  }
});
