/**
 * An agent's container started ahead of need (lib/container/launcher.ts `hold`): the runtime
 * creates and starts it while the service does other work (the worktree's setup), its entry
 * script holding the command until the service lets it go. Nothing of the command runs before
 * that; one never let go — released by the session, released while the runtime is still
 * creating it, or left by a service that died — ends and is removed, and its runtime command
 * with it. Real containers of the test image; skips, loudly, where no runtime answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runtimeCall } from "../lib/container/runtime.ts";
import { spawnProcess } from "../lib/process/spawn.ts";
import { teardownsDone } from "../lib/container/teardowns.ts";
import { session } from "./_container_session.ts";
import { tempDir } from "./helpers.ts";
import { skipping, testImage } from "./_container_image.ts";

const image = await testImage();
const ignore = skipping(image);

/** The container's state (`running`, `created`…), or undefined once there is none. */
async function state(name: string): Promise<string | undefined> {
  if (!image.ok) return undefined;
  const r = await runtimeCall(image.bin, [
    "ps",
    "--all",
    "--filter",
    `name=^${name}$`,
    "--format",
    "{{.State}}",
  ]);
  return r.stdout.trim() || undefined;
}

/** Wait (bounded) until the container runs: its entry is then holding the command. */
async function running(name: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!/running|up/i.test(await state(name) ?? "")) {
    if (Date.now() > deadline) throw new Error(`${name} never ran`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Host processes whose command line names `name` (the runtime's command of the container). */
async function commandsNaming(name: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`).catch(() => "");
    if (cmd.split("\0").includes(name) && /podman|docker/.test(cmd)) out.push(Number(e.name));
  }
  return out;
}

const COMMAND = ["sh", "-c", "echo ran; touch ran.txt; exit 3"];

Deno.test({
  name: "held start: the container runs before it is let go but its command does not; let go by " +
    "the same launch, the command runs with its output and exit code, and the container is gone",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-held-go");
    try {
      box.agent.hold(COMMAND, { cwd: tree, env: box.env });
      await running(box.name);
      await new Promise((r) => setTimeout(r, 300)); // what would run has had time to
      assert.equal(await Deno.stat(join(tree, "ran.txt")).catch(() => undefined), undefined);
      const proc = spawnProcess(COMMAND, {
        cwd: tree,
        env: box.env,
        clearEnv: true,
        launcher: box.agent,
        logPath: join(dir.path, "agent.log"),
      });
      const status = await proc.status;
      assert.equal(status.code, 3, await Deno.readTextFile(join(dir.path, "agent.log")));
      assert.match(await Deno.readTextFile(join(dir.path, "agent.log")), /^ran$/m);
      assert.ok((await Deno.stat(join(tree, "ran.txt"))).isFile);
      await teardownsDone(); // the runtime's command removes it after its exit is known
      assert.equal(await state(box.name), undefined);
    } finally {
      await box.release();
    }
  },
});

Deno.test({
  name: "held start: a held container never let go is ended and removed by the session's " +
    "release; its command never ran and its runtime command has ended",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-held-release");
    box.agent.hold(COMMAND, { cwd: tree, env: box.env });
    await running(box.name);
    await box.release();
    assert.equal(await state(box.name), undefined);
    assert.deepEqual(await commandsNaming(box.name), []);
    assert.equal(await Deno.stat(join(tree, "ran.txt")).catch(() => undefined), undefined);
  },
});

Deno.test({
  name: "held start: a release while the runtime is still creating the container (a stop during " +
    "the start ahead of need) leaves no container and no runtime command behind",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-held-early");
    box.agent.hold(COMMAND, { cwd: tree, env: box.env });
    await box.release(); // at once: nothing is created yet
    assert.equal(await state(box.name), undefined);
    assert.deepEqual(await commandsNaming(box.name), []);
    assert.equal(await Deno.stat(join(tree, "ran.txt")).catch(() => undefined), undefined);
  },
});

Deno.test({
  name: "held start: launching another command than the held one is refused, and the held " +
    "container goes with the session's release",
  ignore,
  async fn() {
    await using dir = await tempDir();
    const { box, tree } = await session(dir.path, "s-held-other");
    box.agent.hold(COMMAND, { cwd: tree, env: box.env });
    assert.throws(
      () => box.agent.launch(["sh", "-c", "echo other"], { cwd: tree, env: box.env }),
      /started for another command/,
    );
    assert.throws(
      () => box.agent.launch(COMMAND, { cwd: tree, env: { ...box.env, EXTRA: "1" } }),
      /started for another command or environment/,
    );
    await box.release();
    assert.equal(await state(box.name), undefined);
    assert.deepEqual(await commandsNaming(box.name), []);
  },
});

Deno.test({
  name: "held start: when the service dies (SIGKILL) while a container is held, the container " +
    "ends without running its command and is removed",
  ignore,
  async fn() {
    if (!image.ok) return;
    await using dir = await tempDir();
    const script = join(dir.path, "hold.ts");
    const lib = new URL("../", import.meta.url).pathname;
    await Deno.writeTextFile(
      script,
      `import { probeIsolation } from "${lib}lib/container/probe.ts";\n` +
        `import { containerLauncher } from "${lib}lib/container/launcher.ts";\n` +
        `import { runtimeEnvironment } from "${lib}lib/container/runtime.ts";\n` +
        `const settings = { runtime: "auto", autoBuildImage: false, image: ` +
        `${JSON.stringify(image.ref)}, baseImage: "x", install: [], setupNetwork: false, ` +
        `agentNetwork: "none", allowHosts: [] } as const;\n` +
        `const iso = await probeIsolation({ settings, env: Deno.env.toObject(), binary: "sh" });\n` +
        `const l = containerLauncher({ runtime: iso.runtime, runtimeEnv: runtimeEnvironment(` +
        `Deno.env.toObject()), relays: [], name: () => "service-held-death", base: { runtime: ` +
        `iso.runtime.name, labels: {}, image: iso.image.ref, mounts: [{ source: ` +
        `${JSON.stringify(dir.path)}, readOnly: false }], user: iso.user, network: "none", ` +
        `addHosts: [], lowPorts: false, relabel: false } });\n` +
        `l.hold(["sh", "-c", "touch ran.txt"], { cwd: ${JSON.stringify(dir.path)}, env: {} });\n` +
        `console.log("held");\nawait new Promise(() => {});\n`,
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", script],
      cwd: lib,
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let said = "";
    while (!said.includes("held")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the holding service ended: ${said}`);
      said += value;
    }
    await running("service-held-death");
    child.kill("SIGKILL");
    await child.status;
    await reader.cancel().catch(() => {});
    const deadline = Date.now() + 60_000;
    while (await state("service-held-death") !== undefined) {
      if (Date.now() > deadline) {
        await runtimeCall(image.bin, ["rm", "--force", "service-held-death"]);
        throw new Error("the held container outlived the service");
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await Deno.stat(join(dir.path, "ran.txt")).catch(() => undefined), undefined);
  },
});
