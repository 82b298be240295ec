/**
 * `service retry` of a task of the run that runs now says the run takes it, not "`service run`
 * runs it" (issue 35): a detached run whose task `f` FAILED while `slow` keeps it going; the
 * real CLI retries `f` and the live run claims it again at once.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, rowsOf, until, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

Deno.test("service retry of a FAILED task of the live run says the running run takes it, and it does", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const go = join(root, "..", `${crypto.randomUUID()}.go`);
  await workspace(root, [{
    name: "s",
    steps: [
      {
        id: "f",
        script: [["if_missing", go, [["exit", 1]]], ["write", "f.txt", "f\n"], ["report", "f"]],
      },
      { id: "slow", script: [["sleep", 60000], ["report", "late"]] },
    ],
  }], "max_agents: 2\n");
  try {
    assert.equal((await cli(root, "run", "--detach", "--port", "0")).code, 0);
    const state = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    const failed = async () =>
      (await rowsOf(root, state.run_id)).some((r) =>
        r.type === "task_failed" && r.data.task_id === "f"
      );
    await until("f FAILED", failed, 120_000);
    await Deno.writeTextFile(go, "");
    const retried = await cli(root, "retry", "f");
    assert.equal(retried.code, 0, retried.out);
    assert.match(
      retried.out,
      new RegExp(`f: OPEN again \\(was FAILED\\); the running run ${state.run_id} takes it now`),
    );
    assert.doesNotMatch(retried.out, /`service run` runs it/);
    await until(
      "the live run lands f",
      async () =>
        (await rowsOf(root, state.run_id)).some((r) =>
          r.type === "task_merged" && r.data.task_id === "f"
        ),
      120_000,
    );
  } finally {
    await cli(root, "stop");
    await Deno.remove(go).catch(() => {});
  }
});
