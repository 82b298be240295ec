/**
 * A solo run never hands its tasks to another workspace's workers (issue 35): `service worker`
 * processes of workspace B keep polling the loopback port B's run used; when the user's own run
 * (workspace A: no tokens, no worker settings, `max_agents: 2`, no `origin`) starts on that port,
 * the workers are refused (403 `workers_not_configured`), say so once and keep waiting for B,
 * and A's tasks run on A's own agents.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { startServer } from "../lib/server/serve.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { rowsOf, workspace } from "./_e2e.ts";
import {
  sharedRemote,
  startWorker,
  WORKER_AUTH_YAML,
  WORKER_TOKENS,
  workerClone,
} from "./_workers.ts";

/** A free loopback port. */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

Deno.test("a run without a worker token keeps its tasks from another workspace's workers polling its port", async () => {
  await using dir = await tempDir();
  // Workspace B: a run with workers; its worker registers, then B's run ends.
  const b = await sharedRemote(dir.path, [{
    name: "s",
    steps: [{ id: "b1", script: [["report", "b"]] }],
  }], "max_agents: 0\n" + WORKER_AUTH_YAML);
  const port = freePort();
  const serverB = await startServer({
    root: b.root,
    host: "127.0.0.1",
    port,
    tokens: WORKER_TOKENS,
    announce: false,
    app: SERVER_APP,
  });
  await using worker = startWorker(await workerClone(dir.path, b.bare, "wb"), serverB.url, "wb");
  await worker.saw(/worker wb: registered with/);
  await serverB.shutdown();
  await worker.saw(/does not answer/);

  // Workspace A: the solo user's, on the same port; no origin, no tokens.
  const root = join(dir.path, "solo");
  await Deno.mkdir(root);
  await workspace(root, [{
    name: "s",
    // More tasks than agent slots: a ready task waits for a slot while the workers ask.
    steps: ["a1", "a2", "a3", "a4"].map((id) => ({
      id,
      script: [["write", `${id}.txt`, `${id}\n`], ["sleep", 1000], ["report", id]],
    })),
  }], "max_agents: 2\n");
  const lines: string[] = [];
  const result = await runPlan({ root, port, app: SERVER_APP, out: (l) => lines.push(l) });
  assert.equal(result.status, "completed", lines.join("\n"));
  const rows = await rowsOf(root, result.runId);
  const claims = rows.filter((r) => r.type === "task_claimed");
  assert.equal(claims.length, 4, "one attempt each");
  for (const claim of claims) {
    assert.equal(claim.data.worker, undefined, `${claim.data.task_id} ran on the run's own agent`);
  }
  assert.equal(rows.filter((r) => r.type === "task_merged").length, 4);
  assert.equal(await Deno.readTextFile(join(root, "a4.txt")), "a4\n");
  // The worker was told why, once, and waits for its own run.
  const told = await worker.saw(/takes no remote workers/);
  assert.match(told, /workers_not_configured: this server takes no remote workers/);
  assert.equal(worker.lines.filter((l) => /takes no remote workers/.test(l)).length, 1);
  assert.ok(!worker.lines.some((l) => /agent .* starting/.test(l)), "the worker ran nothing");
});
