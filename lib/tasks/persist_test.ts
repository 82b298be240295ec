import assert from "node:assert/strict";
import { workspacePaths } from "../workspace.ts";
import { backlogExportPath, type ExportCache, writeBacklogExport } from "./persist.ts";
import { newTask, type Task, TaskInputSchema } from "./task.ts";

function task(id: string, seq: number): Task {
  const input = TaskInputSchema.parse({ id, title: `Task ${id} "quoted" é`, role: "backend" });
  return newTask({ ...input, id }, { status: "OPEN", seq, now: "2026-11-28T10:00:00.000Z" });
}

Deno.test("writeBacklogExport() with its cache writes the bytes JSON.stringify makes, after a task changed too", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    const tasks = [task("a", 0), task("b", 1), task("c", 2)];
    const cache: ExportCache = new Map();
    const expected = (now: string) => JSON.stringify({ generated_at: now, tasks }) + "\n";
    await writeBacklogExport(paths, tasks, { now: "2026-11-28T10:00:01.000Z", cache });
    assert.equal(
      await Deno.readTextFile(backlogExportPath(paths)),
      expected("2026-11-28T10:00:01.000Z"),
    );
    // A change bumps the revision: the cached JSON of that task is not used again.
    Object.assign(tasks[1], { status: "CLAIMED", session_id: "s-1", revision: 1 });
    await writeBacklogExport(paths, tasks, { now: "2026-11-28T10:00:02.000Z", cache });
    assert.equal(
      await Deno.readTextFile(backlogExportPath(paths)),
      expected("2026-11-28T10:00:02.000Z"),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("writeBacklogExport() of more tasks than one written chunk holds writes exactly the bytes JSON.stringify makes, and leaves no temporary file", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    // ~500 bytes a task: 2 000 tasks are near a megabyte, written 128 KiB at a time.
    const tasks = Array.from({ length: 2000 }, (_, i) => task(`t-${i}`, i));
    const now = "2026-11-28T10:00:03.000Z";
    await writeBacklogExport(paths, tasks, { now });
    const text = await Deno.readTextFile(backlogExportPath(paths));
    assert.ok(text.length > 512 * 1024, `${text.length} bytes`);
    assert.equal(text, JSON.stringify({ generated_at: now, tasks }) + "\n");
    const left = await Array.fromAsync(Deno.readDir(paths.runtime), (e) => e.name);
    assert.deepEqual(left, ["task-backlog.json"]);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
