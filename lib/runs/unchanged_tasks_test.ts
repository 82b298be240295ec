import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../journal/journal_file.ts";
import * as ev from "../journal/events.ts";
import { unchangedTasks } from "./unchanged_tasks.ts";

Deno.test("unchangedTasks() names the tasks that closed with nothing to land, not those merged since", async () => {
  const dir = await Deno.makeTempDir({ prefix: "svc-unchanged-" });
  try {
    const journal = join(dir, "journal.jsonl");
    assert.deepEqual(await unchangedTasks(journal), [], "no journal: none");
    await appendEvents(journal, [
      ev.taskUnchanged({ task_id: "a" }),
      ev.taskMerged({ task_id: "b", commit: "c".repeat(40) }),
      ev.taskUnchanged({ task_id: "c" }),
      // c's next attempt landed work after all.
      ev.taskMerged({ task_id: "c", commit: "d".repeat(40) }),
      ev.taskUnchanged({ task_id: "d" }),
    ]);
    await Deno.writeTextFile(journal, '{"type":"task_unchanged","data":{"task', { append: true });
    assert.deepEqual(await unchangedTasks(journal), ["a", "d"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
