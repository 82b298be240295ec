/**
 * A container's death is learned from conmon (lib/container/death_watch.ts), before `podman run`
 * has finished removing it, and the task goes on at once — but never before every process of the
 * container is gone: a hostile agent's background writer that outlives the agent's own process,
 * and closed its output so that no pipe says anything of it, writes nothing after the exit is
 * known. The output read up to the container's death is all of it, to the last unterminated
 * byte, with nothing of the service's own end marker. Real containers of the test image; skips,
 * loudly, where no runtime answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runtimeCall } from "../lib/container/runtime.ts";
import { teardownsDone } from "../lib/container/teardowns.ts";
import { spawnProcess } from "../lib/process/spawn.ts";
import { tempDir } from "./helpers.ts";
import { skipping, testImage } from "./_container_image.ts";
import { session } from "./_container_session.ts";

const image = await testImage();
const ignore = skipping(image) || (image.ok && image.runtime !== "podman");

async function listed(name: string): Promise<string> {
  if (!image.ok) return "";
  const r = await runtimeCall(image.bin, ["ps", "--all", "--filter", `name=^${name}$`]);
  return r.stdout.split("\n").slice(1).join("\n").trim();
}

/**
 * The hostile agent: a writer appending to the worktree without end, its output closed, started
 * by the agent's process, which then says its last words and exits. Each agent here first runs a
 * second, as an agent does: the service watches for the container's death once conmon has
 * started, and a container over within milliseconds of its start, on a loaded machine, can be
 * gone before that watch is in place (its end is then the runtime command's, as before).
 */
const HOSTILE = [
  "sh",
  "-c",
  "sleep 1; (exec >/dev/null 2>&1 </dev/null; i=0; while :; do i=$((i+1)); echo $i >> late.txt; done) & " +
  "i=0; while [ ! -s late.txt ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; " +
  "echo last words; exit 7",
];

Deno.test({
  // Whether the exit was learned before the runtime's command had removed the container is a
  // matter of timing (on a loaded machine the watch can miss it, and the command's exit is taken,
  // as before): `bench/container_stages.ts` measures it; this test holds what must be true.
  name: "container death: the exit and the last words are the agent's, and an agent's background " +
    "writer that closed its output writes nothing into the worktree after the exit",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-death");
    try {
      const log = join(dir.path, "agent.log");
      const proc = spawnProcess(HOSTILE, {
        cwd: tree,
        env: box.env,
        clearEnv: true,
        launcher: box.agent,
        logPath: log,
      });
      const status = await proc.status;
      const late = join(tree, "late.txt");
      const atExit = await Deno.readTextFile(late);
      assert.equal(status.code, 7, await Deno.readTextFile(log));
      assert.deepEqual(proc.tail, ["last words"]);
      assert.ok(atExit.length > 0, "the writer ran");
      await teardownsDone();
      assert.equal(await listed(box.name), "", "the container is removed once its teardown ends");
      assert.equal(await Deno.readTextFile(late), atExit, "nothing was written after the exit");
    } finally {
      await box.release();
    }
  },
});

Deno.test({
  name: "container death: the output read up to the death is all of it — many lines and an " +
    "unterminated last one, on both streams — and none of the service's end marker",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-death-out");
    try {
      const log = join(dir.path, "agent.log");
      const proc = spawnProcess([
        "sh",
        "-c",
        "sleep 1; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); echo $i; done; printf 'err-end' >&2; " +
        "printf 'no newline at the end'",
      ], { cwd: tree, env: box.env, clearEnv: true, launcher: box.agent, logPath: log });
      const status = await proc.status;
      assert.equal(status.code, 0);
      const text = await Deno.readTextFile(log);
      const seq = Array.from({ length: 20000 }, (_, i) => `${i + 1}\n`).join("");
      assert.equal(text.replace("err-end", ""), `${seq}no newline at the end`);
      assert.ok(text.includes("err-end"));
      assert.doesNotMatch(text, /service-output-end/);
      assert.ok(!text.includes("\u0000"), "no byte of the marker");
      assert.equal(proc.outputBytes, new TextEncoder().encode(text).length);
    } finally {
      await box.release();
      await teardownsDone();
    }
  },
});
