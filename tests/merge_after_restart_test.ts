/**
 * An acknowledged merge decision is never dropped: one an operator takes on the board while no
 * orchestrator runs (the run was stopped, or its process died) lands when `service run` resumes
 * the run, and until then the run's outline says it is pending.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { journalOf, rowsOf, sh, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { loopbackServer } from "./_raw_http.ts";

Deno.test("a merge decided while the run was stopped lands when the run resumes", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [{ id: "feature", script: [["write", "feature.txt", "done\n"], ["report"]] }],
    }],
    "review:\n  require_approval: true\n",
  );
  let runId = "";
  const stop = new AbortController();
  const first = runPlan({
    root: dir.path,
    port: 0,
    app: SERVER_APP,
    signal: stop.signal,
    out: (line) => {
      runId ||= /review board .*\?run=(\S+)/.exec(line)?.[1] ?? "";
    },
  });
  for (let i = 0; i < 600; i++) {
    if (
      runId &&
      (await rowsOf(dir.path, runId).catch(() => [])).some((r) => r.type === "task_completed")
    ) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  stop.abort();
  assert.equal((await first).status, "stopped");

  // No orchestrator runs now: the operator merges on the board of `service serve`.
  const server = await loopbackServer(dir.path, { yaml: "" });
  try {
    const res = await fetch(
      `${server.url}/dashboard/review-board/runs/${runId}/tasks/feature/review`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision: "merge" }),
      },
    );
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
    const outline = await (await fetch(`${server.url}/review-board/runs/${runId}/tasks`)).json();
    const task = outline.tasks.find((t: { task_id: string }) => t.task_id === "feature");
    assert.equal(task.merge_decided, true);
    assert.equal(task.merged, undefined);
    assert.match(task.reason, /merge decided by dashboard-operator; pending until it lands/);
  } finally {
    await server.shutdown();
  }

  // `service run` resumes the run: the decision is honoured, not skipped as old.
  const patience = new AbortController();
  const timer = setTimeout(() => patience.abort(), 60_000);
  const resumed = await runPlan({
    root: dir.path,
    port: 0,
    app: SERVER_APP,
    signal: patience.signal,
    out: () => {},
  }).finally(() => clearTimeout(timer));
  assert.equal(resumed.status, "completed", `the merge never landed: ${resumed.problems}`);
  assert.equal(await sh(dir.path, "show", "main:feature.txt"), "done\n");
  const rows = (await journalOf(dir.path, runId)).rows.map((r) => r.row);
  const decided = rows.findIndex((r) => r.type === "task_review_decision");
  const merged = rows.findIndex((r) => r.type === "task_merged");
  assert.ok(decided > 0 && merged > decided, "the merge lands after the decision");
  assert.equal(rows.filter((r) => r.type === "task_review_decision").length, 1, "decided once");
  assert.ok(await Deno.stat(join(dir.path, "feature.txt")).then(() => true, () => false));
});
