import assert from "node:assert/strict";
import { TaskStore } from "../tasks/store.ts";
import { workspacePaths } from "../workspace.ts";
import { unownedTaskIds } from "./service_run.ts";
import { completionVerdict } from "../verification/verdict.ts";

const input = (id: string) => ({
  id,
  title: id,
  role: "backend",
  priority: 2,
  scope: "small" as const,
  complexity: "low" as const,
  depends_on: [],
  owned_files: [],
  completion_signals: [],
  batch_eligible: false,
});

Deno.test("unownedTaskIds(): a continuous run adopts unfinished tasks no run owns, not those an operator marked done", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    await store.create(["open", "by-hand", "cancelled", "owned"].map(input));
    await store.create([input("in-run")], { runId: "run-x" });
    await store.complete(
      "by-hand",
      { operator: true, summary: "fixed by hand" },
      completionVerdict(workspacePaths(root)),
    );
    await store.cancel("cancelled");
    assert.deepEqual(unownedTaskIds(store).sort(), ["open", "owned"]);
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});
