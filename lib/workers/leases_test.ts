import assert from "node:assert/strict";
import { TaskStore } from "../tasks/store.ts";
import { TaskInputSchema } from "../tasks/task.ts";
import { workspacePaths } from "../workspace.ts";
import { leaseOf } from "./leases.ts";

Deno.test("leaseOf(): a session whose lease ran out holds nothing once its task is given up (FAILED), so a late heartbeat or report is refused", async () => {
  const root = await Deno.makeTempDir();
  try {
    const store = await TaskStore.open(workspacePaths(root), { warn: () => {} });
    await store.create([TaskInputSchema.parse({ title: "t", role: "backend", id: "t" })], {
      runId: "run-1",
    });
    await store.claim("t", "s-1", "w1");
    assert.equal(leaseOf(store.get("t"), "w1", "s-1").held, true);
    // Its worker fell silent: the lease ran out on the last attempt.
    await store.orphan("t", "no heartbeat");
    assert.equal(leaseOf(store.get("t"), "w1", "s-1").held, false);
    const failed = await store.giveUp("t", "worker w1 stopped heartbeating: its lease expired");
    assert.equal(failed.status, "FAILED");
    const lease = leaseOf(store.get("t"), "w1", "s-1");
    assert.equal(lease.held, false, "the worker that comes back holds nothing");
    assert.match(
      lease.held ? "" : lease.reason,
      /no longer held by session s-1 on worker w1 \(it is FAILED\)/,
    );
    // The worker stays named as the one that held it last (docs/task-api.md).
    assert.equal(failed.worker, "w1");
    await store.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
