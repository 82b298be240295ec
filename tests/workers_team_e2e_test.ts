/**
 * Remote workers as a team runs them every day (issue 35), on loopback: an orchestrator with
 * `max_agents: 0` and real `service worker` processes, each with its own clone of a shared bare
 * remote, the scripted agent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/orchestrator/run.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { CLI, rowsOf, sh, until, workspace } from "./_e2e.ts";
import { sharedRemote, startWorker, workerClone } from "./_workers.ts";

const WORKERS_ONLY = "max_agents: 0\nheartbeat_timeout_s: 3\n";

/** A server over `root` on a free port, for `runPlan({server})`. */
function serve(root: string) {
  return startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [],
    announce: false,
    app: SERVER_APP,
  });
}

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

  const server = await serve(root);
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
    "cli: claude\nmax_agents: 0\nroles: [qa]\n",
  );
  const checks = await doctor(ws.path, { PATH: "/usr/bin:/bin", HOME: ws.path });
  const agent = checks.filter((c) =>
    c.name.startsWith("agent cli") || c.name === "api key" || c.name === "headless start"
  );
  assert.ok(agent.length > 0 && agent.every((c) => c.ok), JSON.stringify(agent));
});

Deno.test("a task the heartbeat monitor ORPHANs is said with its [ Ns] time stamp, like every other line of the run", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [{ id: "a", script: [["report"]] }],
  }], "max_agents: 0\nheartbeat_timeout_s: 1\n");
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
  // A claimant through the task API that never heartbeats.
  const claimed = await fetch(`${url}/tasks/a/claim`, {
    method: "POST",
    headers: { "content-type": "application/json" },
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
  const server = await serve(root);
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
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: ["a", "b", "c"].map((id) => ({
      id,
      script: [["write", `${id}.txt`, `${id}\n`], ["report"]],
    })),
  }], WORKERS_ONLY);
  // The broken machine's clone names an agent CLI it does not have.
  const broken = await workerClone(dir.path, bare, "broken");
  const yaml = await Deno.readTextFile(join(broken, "service.yaml"));
  await Deno.writeTextFile(
    join(broken, "service.yaml"),
    yaml.replace(/^cli_command: .*$/m, 'cli_command: ["no-such-agent-cli"]'),
  );
  const server = await serve(root);
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
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: ["a", "b", "c"].map((id) => ({
      id,
      script: [["write", `${id}.txt`, `${id}\n`], ["report"]],
    })),
  }], WORKERS_ONLY);
  // Its CLI is there when it registers, and gone when it starts agents.
  const flakyClone = await workerClone(dir.path, bare, "flaky");
  const cliPath = join(dir.path, "vanishing-agent");
  await Deno.writeTextFile(cliPath, "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  const yaml = await Deno.readTextFile(join(flakyClone, "service.yaml"));
  await Deno.writeTextFile(
    join(flakyClone, "service.yaml"),
    yaml.replace(/^cli_command: .*$/m, `cli_command: [${JSON.stringify(cliPath)}]`),
  );
  const server = await serve(root);
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
