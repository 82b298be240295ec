/**
 * Verification's verdicts on a real task store: when a completion is recorded at once, and that
 * a record which cannot be written leaves the task as it was (nothing acknowledged is lost).
 */
import assert from "node:assert/strict";
import { TaskStore } from "../tasks/store.ts";
import { workspacePaths } from "../workspace.ts";
import { taskInput } from "./_test_fixtures.ts";
import { completionVerdict, ledgerVerdict } from "./verdict.ts";

async function ledgerTaskIds(path: string): Promise<string[]> {
  return (await Deno.readTextFile(path)).trim().split("\n").map((l) => JSON.parse(l).task_id);
}

Deno.test("completionVerdict(): a task created outside any run joins one once; its completion then waits for the run's verdict", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const store = await TaskStore.open(paths, { warn: () => {} });
    await store.create([taskInput("ticket"), taskInput("loose")]);
    assert.equal((await store.joinRun("ticket", "run-1")).run_id, "run-1");
    assert.equal((await store.joinRun("ticket", "run-2")).run_id, "run-1"); // never moves
    await store.claim("ticket", "s1");
    await store.complete("ticket", {}, completionVerdict(paths));
    await store.claim("loose", "s2");
    await store.complete("loose", {}, completionVerdict(paths));
    await store.close();
    // Only the task outside any run is recorded at once; the run records the other after its gates.
    assert.deepEqual(await ledgerTaskIds(paths.verificationNudges), ["loose"]);
    const reopened = await TaskStore.open(paths, { warn: () => {} });
    assert.equal(reopened.get("ticket")?.run_id, "run-1");
    assert.equal(reopened.get("loose")?.flagged_unverified, true);
    await reopened.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a verdict whose ledger record cannot be written changes nothing: the completion is refused and can be retried", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const store = await TaskStore.open(paths, { warn: () => {} });
    await store.create([taskInput("t")]);
    await store.claim("t", "s1");
    // The ledger's path is taken by a directory: the append fails.
    await Deno.mkdir(paths.verificationNudges, { recursive: true });
    await assert.rejects(store.complete("t", {}, completionVerdict(paths)));
    assert.equal(store.get("t")?.status, "CLAIMED", "memory did not run ahead of the ledger");
    assert.equal(store.get("t")?.flagged_unverified, false);
    await assert.rejects(
      store.recordVerdict(
        "t",
        ledgerVerdict(paths, "s1", {
          tests_run: true,
          quality_gates_run: false,
          completion_signals_checked: false,
        }),
      ),
    );
    assert.equal(store.get("t")?.verification_count, 0);
    await Deno.remove(paths.verificationNudges);
    const done = await store.complete("t", {}, completionVerdict(paths));
    assert.equal(done.status, "DONE");
    assert.deepEqual(await ledgerTaskIds(paths.verificationNudges), ["t"]);
    await store.close();
    const reopened = await TaskStore.open(paths, { warn: () => {} });
    assert.equal(reopened.get("t")?.status, "DONE");
    await reopened.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
