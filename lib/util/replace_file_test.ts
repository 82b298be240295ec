import assert from "node:assert/strict";
import { join } from "node:path";
import { replaceFile } from "./replace_file.ts";
import { tempWriterPid } from "./atomic_write.ts";
import { writeHeartbeat, writePidFile } from "../agents/runtime_files.ts";

Deno.test("replaceFile() replaces a file whole, makes its directory, and leaves no temporary file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "replace-file-" });
  try {
    const path = join(dir, "pids", "s-1.json");
    replaceFile(path, "first\n");
    replaceFile(path, "second\n");
    assert.equal(await Deno.readTextFile(path), "second\n");
    assert.deepEqual((await Array.fromAsync(Deno.readDir(join(dir, "pids")))).map((e) => e.name), [
      "s-1.json",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("replaceFile() names its temporary file as startup repair recognises, and removes it when the rename fails", async () => {
  const dir = await Deno.makeTempDir({ prefix: "replace-file-" });
  try {
    // A directory where the file should be: the rename fails after the temporary file was made.
    const path = join(dir, "heartbeat.json");
    await Deno.mkdir(join(path, "in-the-way"), { recursive: true });
    const made: string[] = [];
    const rename = Deno.renameSync;
    Deno.renameSync = (from, to) => {
      made.push(String(from));
      rename(from, to);
    };
    try {
      assert.throws(() => replaceFile(path, "{}\n"));
    } finally {
      Deno.renameSync = rename;
    }
    assert.equal(made.length, 1);
    assert.equal(tempWriterPid(made[0]), Deno.pid); // lib/state/startup_repair.ts removes these
    assert.deepEqual((await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name), [
      "heartbeat.json",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a live agent's PID file and heartbeat are written whole under .sdd/runtime", async () => {
  const runtime = await Deno.makeTempDir({ prefix: "replace-file-runtime-" });
  try {
    const pid = await writePidFile(runtime, {
      session_id: "s-1",
      pid: 4242,
      pgid: 4242,
      adapter: "generic",
      command: ["agent"],
      log_path: join(runtime, "s-1.log"),
      started_at: 1,
    });
    const beat = await writeHeartbeat(runtime, {
      session_id: "s-1",
      pid: 4242,
      alive: true,
      last_output_at: null,
      log_bytes: 0,
      updated_at: 2,
    });
    assert.equal(JSON.parse(await Deno.readTextFile(pid)).pid, 4242);
    assert.equal(JSON.parse(await Deno.readTextFile(beat)).updated_at, 2);
  } finally {
    await Deno.remove(runtime, { recursive: true });
  }
});
