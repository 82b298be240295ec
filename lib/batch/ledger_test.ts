import assert from "node:assert/strict";
import { join } from "node:path";
import { BatchLedgerError, inFlight, loadBatchLedger, saveBatchLedger } from "./ledger.ts";

Deno.test("the batch ledger round-trips; an unreadable one is moved aside, never read as empty by status", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = join(dir, "batches.json");
    assert.deepEqual(await loadBatchLedger(path), { version: 1, tasks: {} });
    const entry = {
      task_id: "t1",
      run_id: "r",
      session_id: "b-1",
      provider: "anthropic" as const,
      adapter: "claude",
      custom_id: "b-1",
      base: "abc",
      model: "claude-sonnet-5",
      submitted_at: 1,
    };
    await saveBatchLedger(path, {
      version: 1,
      tasks: { t1: { ...entry, batch_id: "msgbatch_1" }, t2: { ...entry, task_id: "t2" } },
    });
    assert.deepEqual(inFlight(await loadBatchLedger(path)).map((e) => e.task_id), ["t1"]);
    await Deno.writeTextFile(path, "{torn");
    await assert.rejects(() => loadBatchLedger(path, true), BatchLedgerError);
    assert.equal(await Deno.readTextFile(path), "{torn", "status leaves it where it is");
    assert.deepEqual(await loadBatchLedger(path), { version: 1, tasks: {} });
    const aside = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n !== "batches.json");
    assert.equal(aside.length, 1);
    assert.match(aside[0], /^batches\.json\.unreadable-\d+$/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
