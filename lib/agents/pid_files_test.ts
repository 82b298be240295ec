import assert from "node:assert/strict";
import { join } from "node:path";
import { workspacePaths } from "../workspace.ts";
import { pidFileEntry, readPidFiles, reapPidFiles } from "./pid_files.ts";
import { treeRunning } from "../process/tree.ts";
import { writePidFile } from "./runtime_files.ts";

const HOSTILE: [string, string, string | undefined][] = [
  ["torn JSON", '{"pid": 12', "unreadable"],
  ["an array", "[1]", "unreadable"],
  ["null", "null", "unreadable"],
  ["no pid", '{"session_id": "x"}', "no valid pid"],
  ["pid 1 (init)", '{"pid": 1, "pgid": 1}', "no valid pid"],
  ["a string pid", '{"pid": "123"}', "no valid pid"],
  ["a negative pid", '{"pid": -5, "pgid": -5}', "no valid pid"],
];
for (const [name, text, problem] of HOSTILE) {
  Deno.test(`pidFileEntry(): ${name} is reported, never trusted as a process group`, () => {
    const e = pidFileEntry("/x/s.json", "s", text);
    assert.equal(e.alive, false);
    assert.equal(e.pgid, null);
    assert.ok(e.problem?.startsWith(problem!), e.problem ?? "");
  });
}

Deno.test("reapPidFiles() ends a surviving agent group and removes every PID file, stale or torn", async () => {
  const root = await Deno.makeTempDir({ prefix: "pids-" });
  const child = new Deno.Command("sleep", { args: ["30"], detached: true }).spawn();
  try {
    const paths = workspacePaths(root);
    const base = { adapter: "generic", command: ["sleep"], log_path: "x.log", started_at: 0 };
    await writePidFile(paths.runtime, {
      ...base,
      session_id: "live",
      pid: child.pid,
      pgid: child.pid,
    });
    await writePidFile(paths.runtime, {
      ...base,
      session_id: "dead",
      pid: 999_999_999,
      pgid: 999_999_999,
    });
    await Deno.writeTextFile(join(paths.pids, "torn.json"), "{");
    const before = await readPidFiles(paths);
    assert.deepEqual(before.map((a) => [a.session_id, a.alive]), [
      ["dead", false],
      ["live", true],
      ["torn", false],
    ]);
    const told: string[] = [];
    const reaped = await reapPidFiles(paths, 2000, (a) => told.push(a.session_id));
    assert.equal(reaped.length, 3);
    assert.deepEqual(told, ["live"]);
    assert.equal((await child.status).signal, "SIGTERM");
    assert.equal(treeRunning({ pgid: child.pid, pipes: [] }), false);
    assert.deepEqual(await readPidFiles(paths), []);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch { /* already ended */ }
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a file where .sdd/runtime/pids belongs is reported and removed by the reaper", async () => {
  const root = await Deno.makeTempDir({ prefix: "pids-" });
  try {
    const paths = workspacePaths(root);
    await Deno.mkdir(paths.runtime, { recursive: true });
    await Deno.writeTextFile(paths.pids, "[");
    const [entry] = await readPidFiles(paths);
    assert.equal(entry.file, paths.pids);
    assert.match(entry.problem ?? "", /^unreadable/);
    await reapPidFiles(paths, 100);
    assert.deepEqual(await readPidFiles(paths), []);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});
