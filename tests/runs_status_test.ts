/**
 * `service runs` and `service status` tell the current truth of a run: FAILED and CANCELLED
 * tasks counted apart from gated, a run's status recomputed after a cancel or retry, and
 * `status` counting the current run's tasks — real runs of the scripted agent in a real git
 * workspace, through the real CLI.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, planYaml, rowsOf, serveBoard, sh, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

interface Listed {
  run_id: string;
  status: string;
  counts: Record<string, number>;
  failed: number;
  cancelled: number;
}

async function runs(root: string): Promise<Listed[]> {
  const out = await cli(root, "runs", "--json");
  assert.equal(out.code, 0, out.out);
  return JSON.parse(out.out).runs;
}

Deno.test("runs and status after a failed run: counts apart from gated, status recomputed on cancel and retry", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "s",
    steps: [
      { id: "good", script: [["write", "good.txt", "ok\n"], ["report"]] },
      { id: "bad", script: [["fail", "no database"]] },
    ],
  }]);
  const first = await cli(root, "run", "--port", "0");
  assert.equal(first.code, 1, first.out);
  const [failed] = await runs(root);
  assert.equal(failed.status, "failed");
  assert.equal(failed.failed, 1);
  assert.equal(failed.cancelled, 0);
  assert.equal(failed.counts.gated, 1, "the board keeps the FAILED card in gated");
  const table = (await cli(root, "runs")).out.split("\n");
  assert.match(table[0], /GATED\s+NEEDS_REVIEW\s+MERGED\s+FAILED\s+CANCELLED/);
  assert.match(table[1], /failed\s+e2e\s+0\s+0\s+0\s+0\s+1\s+1\s+0\s+verified/);

  const retried = await cli(root, "retry", "bad");
  assert.equal(retried.code, 0, retried.out);
  const [afterRetry] = await runs(root);
  assert.equal(afterRetry.status, "resumable");
  assert.equal(afterRetry.failed, 0);
  let status = await cli(root, "status");
  assert.match(status.out, /run: run-\S+ \(tasks were retried or unblocked since it ended/);

  const cancelled = await cli(root, "cancel", "bad");
  assert.equal(cancelled.code, 0, cancelled.out);
  const [afterCancel] = await runs(root);
  assert.equal(afterCancel.status, "completed", "its only unfinished task was cancelled");
  assert.equal(afterCancel.cancelled, 1);
  assert.equal(afterCancel.failed, 0);
  status = await cli(root, "status");
  assert.match(status.out, new RegExp(`run: ${afterCancel.run_id} \\(completed\\)`));
  assert.match(status.out, /tasks: 2 in run \S+ \(closed 1, cancelled 1\)/);

  // A second run: status counts its tasks, not every run's.
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    planYaml([{
      name: "t",
      steps: [{ id: "next", script: [["write", "n.txt", "n\n"], ["report"]] }],
    }]),
  );
  await sh(root, "commit", "-qam", "next plan");
  const second = await cli(root, "run", "--port", "0");
  assert.equal(second.code, 0, second.out);
  status = await cli(root, "status");
  assert.match(status.out, /tasks: 1 in run \S+ \(closed 1\); 3 in the workspace, every run/);
  const json = JSON.parse((await cli(root, "status", "--json")).out);
  assert.equal(json.run.tasks.total, 1);
  assert.equal(json.tasks.total, 3);
});

Deno.test("an operator's cancel or retry through `service serve` (no run live) is journaled once in its run", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{ name: "s", steps: [{ id: "bad", script: [["fail", "no database"]] }] }]);
  const first = await cli(root, "run", "--port", "0");
  assert.equal(first.code, 1, first.out);
  const [{ run_id: runId }] = await runs(root);
  const count = async (type: string) =>
    (await rowsOf(root, runId)).filter((r) => r.type === type && r.data.task_id === "bad").length;
  await using server = await serveBoard(root);
  const post = (action: string) =>
    fetch(`${server.url}/tasks/bad/${action}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ operator: true }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));
  assert.equal((await post("cancel")).status, 200);
  assert.equal(await count("task_cancelled"), 1, "the route journaled the cancel");
  assert.equal((await runs(root))[0].status, "completed");
  assert.equal((await post("retry")).status, 200);
  const retries = await count("task_retried");
  assert.ok(retries >= 1, "the route journaled the retry");
  // The CLI through the same server: the route journals it, the command does not again.
  const cancelled = await cli(root, "cancel", "bad");
  assert.equal(cancelled.code, 0, cancelled.out);
  assert.equal(await count("task_cancelled"), 2, "one row per cancel");
});
