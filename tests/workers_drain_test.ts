/**
 * A worker stopped with SIGTERM drains (DESIGN.md §17), end to end with real `service worker`
 * processes on loopback, a shared bare remote and the scripted agent: it sends no claim after
 * the signal, its agent is ended after `--drain-timeout`, what it made is pushed and reported
 * `ended_by: "drain"`, and the orchestrator releases the lease at once, counts no attempt, and
 * the next attempt (on another worker) continues from the pushed commit.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { rowsOf, sh, until } from "./_e2e.ts";
import { serveForWorkers, sharedRemote, startWorker, workerClone } from "./_workers.ts";
import { WORKER_AUTH_YAML, WORKER_READ } from "./_workers.ts";

/** The run's rows of `type` for `task`. */
function rowsFor(
  rows: { type: string; data: Record<string, unknown> }[],
  type: string,
  task: string,
) {
  return rows.filter((r) => r.type === type && r.data.task_id === task);
}

Deno.test("a worker's SIGTERM drains: no claim after it, the lease goes within a second, no attempt counts, the next attempt continues the pushed commit", async () => {
  await using dir = await tempDir();
  const marker = join(dir.path, "partial-committed");
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [
      {
        id: "t",
        owned: ["shared.txt"],
        script: [
          // The first attempt commits half of the work, then works on until it is ended.
          ["if_missing", "partial.txt", [
            ["write", "partial.txt", "half done\n"],
            ["run", `git add -A && git -c user.name=a -c user.email=a@x commit -qm partial`],
            ["run", `touch ${marker}`],
            ["sleep", 120_000],
            ["exit", 1],
          ]],
          // The next starts where it was drained: its commit is in this worktree.
          ["require_prompt", "EARLIER WORK:"],
          ["write", "rest.txt", "finished\n"],
          ["report", "continued and finished"],
        ],
      },
      // Ready the moment t lets go of shared.txt: a worker that claimed after its signal gets it.
      { id: "u", owned: ["shared.txt"], script: [["write", "u.txt", "u\n"], ["report", "u"]] },
    ],
  }], "max_agents: 0\nheartbeat_timeout_s: 30\n" + WORKER_AUTH_YAML);
  const server = await serveForWorkers(root);
  try {
    // Two slots: while t runs, w1 keeps asking for a second task (u waits for shared.txt).
    const w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1", {
      slots: 2,
      args: ["--drain-timeout", "1"],
    });
    await using _w1 = w1;
    const lines: string[] = [];
    const result = runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    await w1.saw(/t: agent .* starting/);
    await until("t's first attempt committed its partial work", async () => {
      try {
        await Deno.stat(marker);
        return true;
      } catch {
        return false;
      }
    });
    w1.child.kill("SIGTERM");
    await w1.saw(/worker w1: draining: no new claims; 1 agent\(s\) get 1 s to finish/);
    const signalled = Date.now();
    const drained = await w1.saw(/t: agent \S+ drained; reported commit [0-9a-f]{12}/);
    const reportedAt = Date.now();
    const pushed = /reported commit ([0-9a-f]{12})/.exec(drained)![1];
    // The lease is released as the report is taken: the task is OPEN again at once, not after
    // heartbeat_timeout_s (30 s here).
    let releasedAt = 0;
    await until("t's lease released", async () => {
      const t = await (await fetch(`${server.url}/tasks/t`, { headers: WORKER_READ })).json();
      if (t.status !== "OPEN") return false;
      releasedAt = Date.now();
      return true;
    }, 10_000);
    assert.ok(releasedAt - reportedAt < 1000, `released ${releasedAt - reportedAt} ms after`);
    const afterDrain = await (await fetch(`${server.url}/tasks/t`, { headers: WORKER_READ }))
      .json();
    assert.equal(afterDrain.session_id, null, "no session holds it");
    assert.equal(afterDrain.attempts, 0, "the drained attempt does not count");
    assert.match(afterDrain.summary, /drained from worker w1/);
    assert.equal(await w1.exited(), 0, "a drained worker exits 0");
    assert.ok(w1.lines.some((l) => /ending agent .* \(drain, after 1 s\)/.test(l)));

    // Another worker takes over and finishes from where w1 was.
    await using _w2 = startWorker(await workerClone(dir.path, bare, "w2"), server.url, "w2");
    const done = await result;
    assert.equal(done.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, done.runId);
    const claims = rowsFor(rows, "task_claimed", "t");
    assert.deepEqual(claims.map((r) => r.data.worker), ["w1", "w2"]);
    assert.deepEqual(
      rowsFor(rows, "task_claimed", "u").map((r) => r.data.worker),
      ["w2"],
      "w1 claimed nothing after its signal",
    );
    const [exit] = rowsFor(rows, "agent_exited", "t");
    assert.equal(exit.data.ended_by, "drain");
    assert.equal(exit.data.worker, "w1");
    assert.equal(String(exit.data.commit).slice(0, 12), pushed);
    assert.deepEqual(rowsFor(rows, "task_verification_failed", "t"), [], "not a failure");
    const [retried] = rowsFor(rows, "task_retried", "t");
    assert.match(
      String(retried.data.reason),
      /^drained from worker w1 \(it was stopping\); a new attempt continues from the work it pushed \(no attempt counted\)$/,
    );
    // The landed work holds w1's pushed commit under w2's.
    const [last] = rowsFor(rows, "agent_exited", "t").slice(-1);
    assert.equal(last.data.worker, "w2");
    await sh(
      bare,
      "merge-base",
      "--is-ancestor",
      String(exit.data.commit),
      String(last.data.commit),
    );
    assert.equal(await Deno.readTextFile(join(root, "partial.txt")), "half done\n");
    assert.equal(await Deno.readTextFile(join(root, "rest.txt")), "finished\n");
    assert.equal(rowsFor(rows, "task_merged", "t").length, 1);
    const task = await (await fetch(`${server.url}/tasks/t`, { headers: WORKER_READ })).json();
    assert.equal(task.attempts, 1, "only w2's attempt counted");
    // The board's task detail says what happened to the first attempt.
    const detail = await (await fetch(`${server.url}/review-board/runs/${done.runId}/tasks/t`, {
      headers: WORKER_READ,
    }))
      .json();
    const first = detail.task.attempts[0];
    assert.equal(first.worker, "w1");
    assert.equal(first.outcome, "interrupted");
    assert.equal(first.exit.ended_by, "drain");
    assert.match(first.retried_because, /drained from worker w1/);
    assert.ok(lines.some((l) => /t: drained from worker w1/.test(l)), "the terminal says so");
    // No claim of w1 reached the server after its signal (the access log times each request).
    await server.shutdown();
    const access = (await Deno.readTextFile(join(root, ".sdd/runtime/access.jsonl")))
      .split("\n").filter(Boolean).map((l) => JSON.parse(l));
    const claimsOfW1 = access.filter((a) => a.path === "/workers/w1/claim");
    assert.ok(claimsOfW1.length > 1, "w1 was asking for work before its signal");
    // A claim already on its way when the signal came is not one after it; a worker that went on
    // asking would ask every 100 ms (--poll-ms) through the whole drain, well past this margin.
    const late = claimsOfW1.filter((a) => Date.parse(a.ts) - a.ms > signalled + 250);
    assert.deepEqual(late, [], "no claim after the signal");
  } finally {
    await server.shutdown();
  }
});
