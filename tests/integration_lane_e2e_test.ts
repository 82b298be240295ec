/**
 * The integration lane: finished tasks are captured and verified side by side, their merges into the
 * target branch land one after another (real git, the scripted agent through the generic
 * adapter, the real task server).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";
import { rowsOf, sh, until, watchedRun, workspace } from "./_e2e.ts";

Deno.test("two tasks' landings verify at once, while their merges land one after another", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "repo");
  await Deno.mkdir(root);
  // The gate passes only while another gate runs beside it (or ran before): verified one after
  // another, the first would wait for a partner that never comes and fail.
  const gates = join(dir.path, "gates");
  await Deno.mkdir(gates);
  const overlap = join(dir.path, "overlap.sh");
  await Deno.writeTextFile(
    overlap,
    `touch "${gates}/$$"; n=0\n` +
      `while [ "$(ls "${gates}" | wc -l)" -lt 2 ]; do\n` +
      `  n=$((n+1)); [ $n -gt 300 ] && echo "no gate ran beside this one" && exit 1; sleep 0.05\n` +
      `done\n`,
  );
  await workspace(
    root,
    [{
      name: "s",
      steps: [
        { id: "a", script: [["write", "a.txt", "a\n"], ["report", "a"]] },
        { id: "b", script: [["write", "b.txt", "b\n"], ["report", "b"]] },
      ],
    }],
    "max_agents: 2\nreview:\n  require_approval: true\n" +
      `quality_gates:\n  - { name: overlap, command: "sh ${overlap}", timeout_s: 60 }\n`,
  );
  const run = watchedRun(root);
  const rows = () => run.runId ? rowsOf(root, run.runId) : Promise.resolve([]);
  const of = async (type: string) => (await rows()).filter((r) => r.type === type);
  await until("both to wait for review", async () => (await of("task_completed")).length === 2);

  // Both verified, each gate with the other beside it.
  assert.deepEqual(await of("task_verification_failed"), []);
  const recorded = await of("task_verification_recorded");
  assert.deepEqual(recorded.map((r) => [r.data.task_id, r.data.quality_gates_run]).sort(), [
    ["a", true],
    ["b", true],
  ]);

  for (const task of ["a", "b"]) {
    const answer = await fetch(
      `${run.url}/dashboard/review-board/runs/${run.runId}/tasks/${task}/review`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision: "merge" }),
      },
    );
    assert.equal(answer.status, 200, await answer.text());
  }
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));

  // One after another: the second merge commit sits on the first, in the order of the rows.
  const merged = (await of("task_merged")).map((r) =>
    r.data as { task_id: string; commit: string }
  );
  assert.deepEqual(merged.map((m) => m.task_id), ["a", "b"]);
  const firstParents = (await sh(root, "rev-list", "--first-parent", "main")).trim().split("\n");
  assert.deepEqual(firstParents.slice(0, 2), [merged[1].commit, merged[0].commit]);
  assert.equal((await sh(root, "rev-parse", `${merged[1].commit}^1`)).trim(), merged[0].commit);
  assert.equal(await Deno.readTextFile(join(root, "a.txt")), "a\n");
  assert.equal(await Deno.readTextFile(join(root, "b.txt")), "b\n");
});
