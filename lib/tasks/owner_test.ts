import assert from "node:assert/strict";
import { claimStoreOwnership, releaseStoreOwnership, TaskStoreBusyError } from "./owner.ts";
import { workspacePaths } from "../workspace.ts";
import { parseProcStat, processAlive, processExiting } from "../util/process_alive.ts";

/**
 * A process killed with -9 whose parent never collects it: `sleep` holds the killed child, so
 * its pid stays in the process table (as after `kill -9` from a shell that has not waited yet).
 */
async function killedButVisible(): Promise<{ pid: number; dispose: () => Promise<void> }> {
  const parent = new Deno.Command("sh", {
    args: ["-c", "sleep 600 & echo $!; exec sleep 600"],
    stdout: "piped",
  }).spawn();
  const reader = parent.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const pid = Number((await reader.read()).value!.trim());
  await reader.cancel();
  Deno.kill(pid, "SIGKILL");
  // The kill is delivered asynchronously: the owner is "killed" once it is exiting or a zombie.
  for (let i = 0; i < 200 && processAlive(pid) && !processExiting(pid); i++) {
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    pid,
    dispose: async () => {
      parent.kill("SIGKILL");
      await parent.status;
    },
  };
}

/** A workspace whose task store `.sdd/runtime/task-store.owner` says `pid` (`serve`) holds. */
async function ownedBy(root: string, pid: number) {
  const paths = workspacePaths(root);
  await Deno.mkdir(paths.runtime, { recursive: true });
  await Deno.writeTextFile(
    paths.taskStoreOwner,
    JSON.stringify({ pid, purpose: "serve", since: new Date().toISOString() }),
  );
  return paths;
}

Deno.test("the task store is taken over from an owner killed with -9 whose pid is still visible", async () => {
  const root = await Deno.makeTempDir();
  const owner = await killedButVisible();
  try {
    const paths = await ownedBy(root, owner.pid);
    await claimStoreOwnership(paths, "run");
    const record = JSON.parse(await Deno.readTextFile(paths.taskStoreOwner));
    assert.equal(record.pid, Deno.pid);
    await releaseStoreOwnership(paths);
  } finally {
    await owner.dispose();
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("a live owner of the task store is still refused at once", async () => {
  const root = await Deno.makeTempDir();
  const live = new Deno.Command("sleep", { args: ["600"] }).spawn();
  try {
    const paths = await ownedBy(root, live.pid);
    const started = Date.now();
    await assert.rejects(claimStoreOwnership(paths, "run"), TaskStoreBusyError);
    assert.ok(Date.now() - started < 1000, "a running owner is not waited for");
  } finally {
    live.kill("SIGKILL");
    await live.status;
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("processAlive() counts a zombie as gone; parseProcStat() reads past a name with ') '", async () => {
  const owner = await killedButVisible();
  try {
    for (let i = 0; i < 100 && processAlive(owner.pid); i++) {
      await new Promise((r) => setTimeout(r, 10)); // the kill is delivered asynchronously
    }
    assert.equal(processAlive(owner.pid), false);
  } finally {
    await owner.dispose();
  }
  assert.deepEqual(parseProcStat("42 (a) b) Z 1 42 42 0 -1 4194564 0 0"), {
    state: "Z",
    flags: 4194564,
  });
  assert.equal(parseProcStat("garbage"), undefined);
});
