import assert from "node:assert/strict";
import { TaskStore } from "../tasks/store.ts";
import { TaskInputSchema } from "../tasks/task.ts";
import { workspacePaths } from "../workspace.ts";
import { applyStoreChange } from "./store_change.ts";

Deno.test("a merge the journal recorded closes its task, also one cancelled while the merge was landing", async () => {
  const root = await Deno.makeTempDir();
  const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
  try {
    const [plain, late] = await store.create(
      ["plain", "late"].map((id) =>
        TaskInputSchema.parse({ id, title: id, goal: "g", role: "backend" })
      ),
    );
    for (const t of [plain, late]) {
      await store.claim(t.id, `s-${t.id}`);
      await store.complete(t.id, { session_id: `s-${t.id}` }, () => undefined);
    }
    // Its ticket was closed while the merge step ran: the store says CANCELLED, the work landed.
    await store.cancel(late.id, "ticket o/r#4 was closed in tracker_b");
    for (const t of [plain, late]) {
      await applyStoreChange(store, { op: "merged", taskId: t.id });
      assert.equal(store.get(t.id)!.status, "CLOSED", t.id);
    }
  } finally {
    await store.close();
    await Deno.remove(root, { recursive: true });
  }
});
