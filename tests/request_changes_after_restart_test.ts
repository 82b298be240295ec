/**
 * An acknowledged request for changes is never dropped: one an operator sends on the board while
 * no orchestrator runs (the run was stopped, or its process died) starts the new attempt it asks
 * for, with its note, when `service run` resumes the run — as a merge decided then lands
 * (merge_after_restart_test.ts).
 */
import assert from "node:assert/strict";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { rowsOf, until, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { loopbackServer } from "./_raw_http.ts";

Deno.test("a request for changes sent while the run was stopped starts a new attempt with its note when the run resumes", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [{ id: "feature", script: [["write", "feature.txt", "done\n"], ["report"]] }],
    }],
    "review:\n  require_approval: true\n",
  );
  const count = async (runId: string, type: string) =>
    (await rowsOf(dir.path, runId).catch(() => [])).filter((r) => r.type === type).length;
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
  await until(
    "the task to wait for review",
    async () => runId !== "" && (await count(runId, "task_completed")) > 0,
  );
  stop.abort();
  assert.equal((await first).status, "stopped");

  // No orchestrator runs now: the operator requests changes on the board of `service serve`.
  const server = await loopbackServer(dir.path, { yaml: "" });
  try {
    const res = await fetch(
      `${server.url}/dashboard/review-board/runs/${runId}/tasks/feature/review`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision: "request_changes", note: "name the file in the README" }),
      },
    );
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
  } finally {
    await server.shutdown();
  }
  const claims = await count(runId, "task_claimed");

  // `service run` resumes the run: the request is honoured, not skipped as old.
  const resumedStop = new AbortController();
  const lines: string[] = [];
  const resumed = runPlan({
    root: dir.path,
    port: 0,
    app: SERVER_APP,
    signal: resumedStop.signal,
    out: (line) => lines.push(line),
  });
  try {
    await until(
      "the new attempt the operator asked for",
      async () => (await count(runId, "task_claimed")) > claims,
    );
  } finally {
    resumedStop.abort();
    await resumed;
  }
  const retried = (await rowsOf(dir.path, runId)).filter((r) => r.type === "task_retried");
  assert.equal(retried.length, 1, "one new attempt");
  assert.match(
    String(retried[0].data.reason),
    /an operator \(dashboard-operator\) requested changes: name the file in the README/,
  );
  assert.ok(
    lines.some((l) =>
      /feature: an operator .*requested changes: name the file in the README/.test(l)
    ),
    `the terminal says so:\n${lines.join("\n")}`,
  );
});
