/**
 * An agent that exhausts its container's memory leaves nothing in the directory the service runs
 * in. conmon, podman's container monitor, creates an empty file named `oom` in its working
 * directory when the kernel's OOM killer ends a process of its container; a runtime command
 * started from the service's directory (the checkout `service run` runs in) put that file into
 * the user's checkout. Each case runs a small service program in a directory of its own (as
 * `service run` runs in the checkout) that starts a memory hog the way the service does — through
 * the container launcher (agents, gates, setup, teardown) and through a runtime call (the probe's
 * trial container) — and looks for the file once the container has ended. Real containers of the
 * test image; skips, loudly, where no runtime answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";
import { skipping, testImage } from "./_container_image.ts";

const image = await testImage();
const ignore = skipping(image);

/** Allocates 16 MiB at a time until the kernel ends it. */
const HOG = ["deno", "eval", "const a = []; for (;;) a.push(new Uint8Array(16 << 20).fill(1));"];

const lib = new URL("../", import.meta.url).pathname;

/** Runs `body` (a module's text) with `cwd` as its working directory; resolves its output. */
async function serviceIn(cwd: string, body: string): Promise<string> {
  const script = join(cwd, "..", `oom-${crypto.randomUUID()}.ts`);
  await Deno.writeTextFile(script, body);
  try {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--config", join(lib, "deno.json"), script],
      cwd,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.ok(out.success, `the service program failed: ${text}`);
    return text;
  } finally {
    await Deno.remove(script).catch(() => {});
  }
}

async function entries(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return names.sort();
}

Deno.test({
  name: "an agent's container killed for its memory leaves no `oom` file in the directory the " +
    "service runs in (the container launcher)",
  ignore,
  async fn() {
    if (!image.ok) return;
    await using dir = await tempDir();
    const checkout = join(dir.path, "checkout");
    await Deno.mkdir(checkout);
    await Deno.writeTextFile(join(checkout, "README.md"), "# mine\n");
    const name = `service-oom-${crypto.randomUUID().slice(0, 8)}`;
    const out = await serviceIn(
      checkout,
      `import { probeIsolation } from "${lib}lib/container/probe.ts";\n` +
        `import { containerLauncher } from "${lib}lib/container/launcher.ts";\n` +
        `import { runtimeEnvironment } from "${lib}lib/container/runtime.ts";\n` +
        `const settings = { runtime: "auto", autoBuildImage: false, image: ` +
        `${JSON.stringify(image.ref)}, baseImage: "x", install: [], setupNetwork: false, ` +
        `agentNetwork: "none", allowHosts: [] } as const;\n` +
        `const iso = await probeIsolation({ settings, env: Deno.env.toObject(), binary: "sh" });\n` +
        `const l = containerLauncher({ runtime: iso.runtime, runtimeEnv: runtimeEnvironment(` +
        `Deno.env.toObject()), relays: [], name: () => ${JSON.stringify(name)}, ` +
        `stateDir: ${JSON.stringify(join(dir.path, "state"))}, base: { runtime: ` +
        `iso.runtime.name, labels: {}, image: iso.image.ref, mounts: [], user: iso.user, ` +
        `network: "none", addHosts: [], lowPorts: false, relabel: false, memoryMb: 100 } });\n` +
        `const run = l.launch(${JSON.stringify(HOG)}, { cwd: "/", env: {} });\n` +
        `await Promise.all([run.output.stdout.cancel(), run.output.stderr.cancel()]);\n` +
        `const status = await run.exited;\nawait run.finish();\n` +
        `console.log("exit", status.code);\n`,
    );
    // 137: the OOM killer's SIGKILL ended the hog (the container's own exit code).
    assert.match(out, /exit 137/, out);
    assert.deepEqual(await entries(checkout), ["README.md"]);
  },
});

Deno.test({
  name: "a container the service starts with one runtime call (the probe's trial) and that is " +
    "killed for its memory leaves no `oom` file in the directory the service runs in",
  ignore,
  async fn() {
    if (!image.ok) return;
    await using dir = await tempDir();
    const checkout = join(dir.path, "checkout");
    await Deno.mkdir(checkout);
    const out = await serviceIn(
      checkout,
      `import { runtimeCall } from "${lib}lib/container/runtime.ts";\n` +
        `const r = await runtimeCall(${JSON.stringify(image.bin)}, ["run", "--rm", "--memory", ` +
        `"100m", "--memory-swap", "100m", "--network", "none", ${JSON.stringify(image.ref)}, ` +
        `...${JSON.stringify(HOG)}], { timeoutMs: 120_000 });\n` +
        `console.log("exit", r.code);\n`,
    );
    assert.match(out, /exit 137/, out);
    assert.deepEqual(await entries(checkout), []);
  },
});
