/** `service run` on a run whose only unfinished task waits on a FAILED one refuses, saying why. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";
import { cli, workspace } from "./_e2e.ts";

Deno.test("resuming a run whose only unfinished task is BLOCKED on a FAILED one refuses before journaling anything, naming both and the way out", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [
    { name: "a", steps: [{ id: "f1", script: [["fail", "the build is broken"]] }] },
    { name: "b", depends: ["a"], steps: [{ id: "f2", script: [["report"]] }] },
  ]);
  const first = await cli(dir.path, "run", "--port", "0");
  assert.equal(first.code, 1, first.out);
  const runId = /run (run-\S+) failed/.exec(first.out)![1];
  const journal = join(dir.path, ".sdd/runs", runId, "journal.jsonl");
  const rows = (await Deno.readTextFile(journal)).split("\n").length;

  const again = await cli(dir.path, "run", "--port", "0");
  assert.equal(again.code, 1, again.out);
  assert.match(
    again.out,
    new RegExp(`run ${runId} has nothing to run: f2 waits on f1 \\(FAILED\\)`),
  );
  assert.match(again.out, /fix: `service retry f1` tries again, or `service cancel f1` lets/);
  assert.doesNotMatch(again.out, /resuming run/);
  assert.equal((await Deno.readTextFile(journal)).split("\n").length, rows, "nothing journaled");
  const status = await cli(dir.path, "status");
  assert.match(status.out, /f2 is blocked: waits on f1 \(FAILED\); `service retry f1`/);
});
