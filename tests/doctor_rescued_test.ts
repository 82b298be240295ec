/**
 * `doctor` does not list as unmerged the rescued work of a task that merged since (issue 35):
 * a real run whose first attempt fails its completion signal (its work is kept at a rescue
 * ref) and whose second attempt lands; then the real `doctor`.
 */
import assert from "node:assert/strict";
import { cli, sh, watchedRun, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

Deno.test("doctor leaves out the rescued work of a task whose later attempt merged", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "g",
      signals: [{ path_exists: "ok.txt" }],
      script: [
        ["first_attempt", [["write", "wrong.txt", "wrong\n"]]],
        ["retry", [["write", "ok.txt", "ok\n"]]],
        ["report", "done"],
      ],
    }],
  }]);
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  const rescued = await sh(dir.path, "for-each-ref", "--format=%(refname)", "refs/service/rescue/");
  assert.notEqual(rescued.trim(), "", "the first attempt's work was kept at a rescue ref");
  const doctor = await cli(dir.path, "doctor", "--json");
  const report = JSON.parse(doctor.out.slice(doctor.out.indexOf("{")));
  const check = report.checks.find((c: { name: string }) => c.name === "rescued work");
  assert.equal(check, undefined, JSON.stringify(check));
});
