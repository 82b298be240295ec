/**
 * A second Ctrl-C reaches an agent in a container too: asked to end again without a grace while
 * `podman stop` waits out the 30 s one, the container gets SIGKILL at once. Real podman, the
 * test image; skips, loudly, where no runtime answers.
 */
import assert from "node:assert/strict";
import { spawnProcess } from "../lib/process/spawn.ts";
import { teardownsDone } from "../lib/container/teardowns.ts";
import { tempDir } from "./helpers.ts";
import { skipping, testImage } from "./_container_image.ts";
import { session } from "./_container_session.ts";

const image = await testImage();
const ignore = skipping(image) || (image.ok && image.runtime !== "podman");

Deno.test({
  name: "container: end() again without a grace SIGKILLs an agent that ignores SIGTERM now, " +
    "not after its 30 s grace",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-stopnow");
    try {
      const proc = spawnProcess([
        "sh",
        "-c",
        "trap '' TERM; echo ready; while :; do sleep 0.1; done",
      ], {
        cwd: tree,
        env: box.env,
        clearEnv: true,
        launcher: box.agent,
        graceMs: 30_000,
      });
      // Generous: a container's start queues behind every other podman command of a full suite.
      const deadline = Date.now() + 120_000;
      while (!proc.tail.includes("ready")) {
        assert.ok(proc.alive, `the agent ended before it was ready: ${proc.tail.join(" | ")}`);
        assert.ok(Date.now() < deadline, `the agent never started: ${proc.tail.join(" | ")}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const first = proc.end("stop");
      await new Promise((r) => setTimeout(r, 1000));
      assert.equal(proc.alive, true, "it ignores SIGTERM");
      const asked = performance.now();
      const status = await proc.end("stop", 0);
      const took = performance.now() - asked;
      assert.equal(await first, status);
      assert.ok(took < 15_000, `ended ${Math.round(took)} ms after the second end, not 30 s`);
      assert.equal(status.killed, true);
      assert.equal(status.endedBy, "stop");
    } finally {
      await box.release();
      await teardownsDone();
    }
  },
});
