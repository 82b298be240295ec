/**
 * Remote workers end to end on loopback (DESIGN.md §16): an orchestrator and `service worker`
 * processes, each with its own clone of a shared bare remote, the scripted agent; every landed
 * commit is traced to the one worker that made it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/orchestrator/run.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { rowsOf, sh } from "./_e2e.ts";
import { sharedRemote, startWorker, workerClone } from "./_workers.ts";

const WORKERS_ONLY = "max_agents: 0\nheartbeat_timeout_s: 3\n";

/** The run's rows of `type` for `task`. */
function rowsFor(
  rows: { type: string; data: Record<string, unknown> }[],
  type: string,
  task: string,
) {
  return rows.filter((r) => r.type === type && r.data.task_id === task);
}

Deno.test("two workers run a plan's tasks and each landed commit is traced to one worker", async () => {
  await using dir = await tempDir();
  const { root, bare } = await sharedRemote(dir.path, [{
    name: "s",
    steps: [
      // Each takes a moment, so the second task goes to the second worker's free slot.
      { id: "a", script: [["write", "a.txt", "from a\n"], ["sleep", 1500], ["report", "a done"]] },
      { id: "b", script: [["write", "b.txt", "from b\n"], ["sleep", 1500], ["report", "b done"]] },
    ],
  }], WORKERS_ONLY);
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [],
    announce: false,
    app: SERVER_APP,
  });
  try {
    await using _w1 = startWorker(await workerClone(dir.path, bare, "w1"), server.url, "w1");
    await using _w2 = startWorker(await workerClone(dir.path, bare, "w2"), server.url, "w2");
    const lines: string[] = [];
    const result = await runPlan({ root, server, app: SERVER_APP, out: (l) => lines.push(l) });
    assert.equal(result.status, "completed", lines.join("\n"));
    const rows = await rowsOf(root, result.runId);
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
  } finally {
    await server.shutdown();
  }
});
