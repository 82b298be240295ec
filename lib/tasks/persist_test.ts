import assert from "node:assert/strict";
import { workspacePaths } from "../workspace.ts";
import {
  backlogExportPath,
  type ExportCache,
  loadTaskSpecs,
  unreadableSpecs,
  writeBacklogExport,
} from "./persist.ts";
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

Deno.test("an unreadable spec file is named with printable words: its bytes (NUL, escapes) never reach a terminal", async () => {
  const root = await Deno.makeTempDir();
  try {
    const paths = workspacePaths(root);
    await Deno.mkdir(`${paths.backlog}/open`, { recursive: true });
    const cases = [
      "\u0000garbage: [unclosed\n",
      "title: \u001b]0;OWNED\u0007\u001b[2J\nid: [\n",
      "id: x\nstatus: \u001b[31mOPEN\n",
    ];
    for (const [i, text] of cases.entries()) {
      await Deno.writeTextFile(`${paths.backlog}/open/t${i}.yaml`, text);
    }
    const loaded = await loadTaskSpecs(paths);
    assert.equal(loaded.skipped.length, cases.length);
    assert.equal(loaded.problems.length, cases.length);
    for (const p of loaded.problems) {
      // deno-lint-ignore no-control-regex -- the test looks for exactly these bytes
      assert.doesNotMatch(p, /[\u0000-\u001f\u007f]/, p);
      assert.match(p, /\(file skipped, left in place\)|\(skipped\)$/);
    }
    assert.equal(unreadableSpecs(loaded).length, cases.length);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
