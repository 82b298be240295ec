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

/** Host processes whose command line names `name` (the runtime's command of the container). */
async function commandsNaming(name: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`).catch(() => "");
    if (cmd.split("\0").includes(name) && /podman/.test(cmd)) out.push(Number(e.name));
  }
  return out;
}

async function listed(name: string): Promise<string> {
  if (!image.ok) return "";
  const r = await runtimeCall(image.bin, ["ps", "--all", "--filter", `name=^${name}$`]);
  return r.stdout.split("\n").slice(1).join("\n").trim();
}

/**
 * The hostile agent: a writer appending to the worktree without end, its output closed, started
 * by the agent's process, which then says its last words and exits.
 */
const HOSTILE = [
  "sh",
  "-c",
  "(exec >/dev/null 2>&1 </dev/null; i=0; while :; do i=$((i+1)); echo $i >> late.txt; done) & " +
  "i=0; while [ ! -s late.txt ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i+1)); done; " +
  "echo last words; exit 7",
];

Deno.test({
  name: "container death: the exit is known while the runtime still removes the container, and " +
    "an agent's background writer that closed its output writes nothing into the worktree after",
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
      const stillRemoving = (await commandsNaming(box.name)).length > 0;
      assert.equal(status.code, 7, await Deno.readTextFile(log));
      assert.deepEqual(proc.tail, ["last words"]);
      assert.ok(atExit.length > 0, "the writer ran");
      assert.ok(stillRemoving, "the exit was known before the runtime's command had removed it");
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
        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); echo $i; done; printf 'err-end' >&2; " +
        "printf 'no newline at the end'",
      ], { cwd: tree, env: box.env, clearEnv: true, launcher: box.agent, logPath: log });
      const status = await proc.status;
      const stillRemoving = (await commandsNaming(box.name)).length > 0;
      assert.equal(status.code, 0);
      assert.ok(stillRemoving, "the output was read to its end marker, not to the pipes' end");
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
