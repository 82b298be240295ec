import assert from "node:assert/strict";
import * as ev from "../journal/events.ts";
import { appendEvents } from "../journal/journal_file.ts";
import { TaskStore } from "../tasks/store.ts";
import type { Task } from "../tasks/task.ts";
import { journalPath, workspacePaths } from "../workspace.ts";
import { landedButOpen, type MergedRow, repairStoreFromJournals } from "./store_repair.ts";

type Facts = Pick<Task, "id" | "run_id" | "status">;

const merged = new Map<string, Map<string, MergedRow>>([
  ["r1", new Map([["a", { seq: 7, commit: "c".repeat(40) }]])],
]);

Deno.test("landedButOpen(): a task its own run's journal says merged is closed whatever the store says, and only then", async (t) => {
  const table: [string, Facts, boolean][] = [
    [
      "DONE (the store write failed after the row)",
      { id: "a", run_id: "r1", status: "DONE" },
      true,
    ],
    ["CANCELLED meanwhile", { id: "a", run_id: "r1", status: "CANCELLED" }, true],
    ["OPEN again", { id: "a", run_id: "r1", status: "OPEN" }, true],
    ["CLOSED already", { id: "a", run_id: "r1", status: "CLOSED" }, false],
    ["a task of another run with the same id", { id: "a", run_id: "r2", status: "DONE" }, false],
    ["a task of no run", { id: "a", run_id: null, status: "DONE" }, false],
    ["a task the journal does not name", { id: "b", run_id: "r1", status: "DONE" }, false],
  ];
  for (const [name, task, repaired] of table) {
    await t.step(name, () => {
      const out = landedButOpen([task], merged);
      assert.deepEqual(
        out,
        repaired
          ? [{ taskId: "a", runId: "r1", was: task.status, row: merged.get("r1")!.get("a") }]
          : [],
      );
    });
  }
});

const TASK = {
  title: "A",
  role: "backend",
  priority: 2,
  scope: "medium" as const,
  complexity: "medium" as const,
  depends_on: [],
  owned_files: [],
  completion_signals: [],
  batch_eligible: false,
};

Deno.test("repairStoreFromJournals() closes a DONE task the journal says merged, says so once, and trusts no row after a broken one", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const store = await TaskStore.open(paths, { warn: () => {} });
    await store.create([{ ...TASK, id: "a" }, { ...TASK, id: "b" }], { runId: "r1" });
    for (const id of ["a", "b"]) {
      await store.claim(id, `s-${id}`);
      await store.complete(id, {}, () => undefined);
    }
    const journal = journalPath(paths, "r1");
    await appendEvents(journal, [
      ev.runStarted({ run_id: "r1", plan: "p" }),
      ev.taskMerged({ task_id: "a", commit: "0123456789abcdef" }),
    ]);
    // A row appended after a broken one is not trusted: b stays as the store says.
    await Deno.writeTextFile(journal, "not a row\n", { append: true });
    await Deno.writeTextFile(
      journal,
      JSON.stringify({ data: { task_id: "b" }, type: "task_merged" }) + "\n",
      { append: true },
    );

    const lines = await repairStoreFromJournals(paths, store);
    assert.deepEqual(lines, [
      "repaired: a was merged as 0123456789 (journal seq 1 of r1) but the task store said DONE; " +
      "it is CLOSED now and is not run again",
    ]);
    assert.equal(store.get("a")?.status, "CLOSED");
    assert.equal(store.get("b")?.status, "DONE");
    assert.deepEqual(await repairStoreFromJournals(paths, store), [], "repaired once");
    await store.close();
    const reopened = await TaskStore.open(paths, { warn: () => {} });
    assert.equal(reopened.get("a")?.status, "CLOSED", "durably");
    await reopened.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
