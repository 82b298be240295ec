/**
 * The death a container's launcher reports (`Launched.exited`) is the container's whole death,
 * not its main process's: when it resolves, no process the agent started runs any more — not
 * even one that holds the worktree's file open and writes on, while the agent's own process
 * still waits. Checked at the moment the launcher says so, before the service's own end of the
 * container (closing its input, which makes its watchdog kill what is left) can hide an early
 * claim. Real containers of the test image; skips, loudly, where no runtime answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { teardownsDone } from "../lib/container/teardowns.ts";
import { tempDir } from "./helpers.ts";
import { skipping, testImage } from "./_container_image.ts";
import { session } from "./_container_session.ts";

const image = await testImage();
const ignore = skipping(image) || (image.ok && image.runtime !== "podman");

/** Processes of a container whose shell's command line contains `text` (not the runtime's command, which carries the same argv). */
async function running(text: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`).catch(() => "");
    const [program] = cmd.split("\0");
    if (cmd.includes(text) && /(^|\/)sh$/.test(program ?? "")) out.push(Number(e.name));
  }
  return out;
}

Deno.test({
  name: "container death: when the launcher says the program exited, no process of its " +
    "container runs — a writer holding the worktree's file open and the agent's own waiting " +
    "process included",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-death-exited");
    const tag = `death-probe-${crypto.randomUUID()}`;
    const launched = box.agent.launch([
      "sh",
      "-c",
      `: ${tag}; (exec >/dev/null 2>&1 </dev/null 4>>late.txt; i=0; ` +
      "while :; do i=$((i+1)); echo $i >&4; done) & " +
      "i=0; while [ ! -s late.txt ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; " +
      "sleep 0.3; exit 9",
    ], { cwd: tree, env: box.env, clearEnv: true });
    const output = launched.output ?? launched.child;
    const drained = Promise.all([
      new Response(output.stdout).arrayBuffer(),
      new Response(output.stderr).arrayBuffer(),
    ]);
    try {
      assert.ok(launched.exited, "podman 4: the death is learned before the command's exit");
      const exit = await launched.exited;
      const left = await running(tag);
      const size = (await Deno.stat(join(tree, "late.txt"))).size;
      assert.deepEqual(left, [], "no process of the container runs once its exit is known");
      assert.equal(exit.code, 9);
      await drained;
      await launched.finish?.();
      await teardownsDone();
      assert.equal((await Deno.stat(join(tree, "late.txt"))).size, size, "nothing written after");
    } finally {
      await launched.end(0, true).catch(() => {});
      await box.release();
      await teardownsDone();
    }
  },
});
