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
import { createWorktree } from "../lib/worktrees/worktrees.ts";
import { sealWorktree } from "../lib/worktrees/trees.ts";
import { probeIsolation } from "../lib/container/probe.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { prepareSessionContainer, type SessionContainer } from "../lib/container/session.ts";
import { teardownsDone } from "../lib/container/teardowns.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { sh } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { skipping, testImage } from "./_container_image.ts";

const image = await testImage();
const ignore = skipping(image) || (image.ok && image.runtime !== "podman");

/** A repository, a sealed worktree of session `sessionId` and its prepared container. */
async function session(dir: string, sessionId: string): Promise<{
  box: SessionContainer;
  tree: string;
}> {
  if (!image.ok) throw new Error("no runtime");
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "t@localhost");
  await sh(dir, "config", "user.name", "t");
  await Deno.writeTextFile(join(dir, "README.md"), "# death\n");
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
  const wt = await createWorktree(dir, sessionId, (await sh(dir, "rev-parse", "HEAD")).trim());
  const iso = await probeIsolation({
    settings: containerSettings(ServiceConfigSchema.parse({
      cli: "generic",
      roles: { backend: {} },
      isolation: "container",
      container: { image: image.ref },
    })),
    env: Deno.env.toObject(),
    binary: "sh",
  });
  const box = await prepareSessionContainer({
    iso,
    root: dir,
    runtimeDir: join(dir, ".sdd", "runtime"),
    runId: "r-death",
    sessionId,
    admin: await sealWorktree(dir, sessionId),
    branch: wt.branch,
    serverUrl: "http://127.0.0.1:9/",
    env: { LANG: "C.UTF-8" },
    processEnv: Deno.env.toObject(),
    warn: () => {},
  });
  return { box, tree: wt.path };
}

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
