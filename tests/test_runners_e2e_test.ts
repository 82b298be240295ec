/**
 * The service sees a test run in the real output of the common runners (issue 35): a tape suite
 * prints `# tests 157`, `# pass  157` and no `# fail` line when all pass, and the board said "did
 * not run: tests" after a real run. The scripted agent prints each runner's captured real output
 * (lib/verification/testdata/runner_outputs) in its session; the run's
 * `task_verification_recorded` row names the runner and the outcome.
 */
import assert from "node:assert/strict";
import { rowsOf, watchedRun, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

const OUTPUTS = new URL("../lib/verification/testdata/runner_outputs/", import.meta.url).pathname;

const CASES: [file: string, runner: string, outcome: string][] = [
  ["tape_passed.txt", "tape", "passed"],
  ["tape_failed.txt", "tape", "failed"],
  ["ava_passed.txt", "ava", "passed"],
  ["uvu_passed.txt", "uvu", "passed"],
  ["jasmine_failed.txt", "jasmine", "failed"],
  ["tap_passed.txt", "tap", "passed"],
];

Deno.test("a run records the tests an agent ran with tape, ava, uvu, jasmine and tap as run", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: CASES.map(([file], i) => ({
      id: `t${i}`,
      script: [["write", `f${i}.txt`, `${i}\n`], ["run", `cat ${OUTPUTS}${file}`], [
        "report",
        "ran",
      ]],
    })),
  }], "max_agents: 2\n");
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  const rows = await rowsOf(dir.path, result.runId);
  for (const [i, [file, runner, outcome]] of CASES.entries()) {
    const recorded = rows.find((r) =>
      r.type === "task_verification_recorded" && r.data.task_id === `t${i}`
    );
    assert.ok(recorded, `t${i} has its record`);
    assert.equal(recorded.data.tests_run, true, `${file}: the tests ran`);
    const runs = recorded.data.test_runs as { runner: string; outcome: string }[];
    assert.equal(runs[0].runner, runner, file);
    assert.equal(runs[0].outcome, outcome, file);
  }
});
