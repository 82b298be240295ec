/**
 * An agent image that lacks a tool the isolation needs is refused before `run_started`, naming
 * the tool, what it is for and the fix (`image_incomplete`), and `doctor` says the same: real
 * podman (or docker) images built from the test image with `socat` or `git` removed. Before, such
 * an image passed the probe and every attempt failed inside ("socat: not found"), burning the
 * task's attempts. Skips, loudly, where no runtime answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { ContainerError } from "../lib/container/errors.ts";
import { runDoctor } from "../lib/cli/commands/doctor.ts";
import { probeIsolation } from "../lib/container/probe.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { planYaml, sh } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { derivedTestImage, IMAGE_AGENT, skipping, testImage } from "./_container_image.ts";

const image = await testImage();
const ignore = skipping(image);

/** A repository whose agents run in containers of `ref`. */
async function workspace(dir: string, ref: string): Promise<void> {
  await sh(dir, "init", "-q", "-b", "main");
  await sh(dir, "config", "user.email", "e2e@localhost");
  await sh(dir, "config", "user.name", "e2e");
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", IMAGE_AGENT])}\n` +
      `roles:\n  backend: {}\nisolation: container\nmemory_mb: 256\ncpu_cores: 1\n` +
      `container:\n  image: ${ref}\n`,
  );
  await Deno.writeTextFile(
    join(dir, "plan.yaml"),
    planYaml([{ name: "s", steps: [{ id: "t", script: [["report"]] }] }]),
  );
  await sh(dir, "add", "-A");
  await sh(dir, "commit", "-q", "-m", "init");
}

/** [image name, what removes the tool, the message, the fix]. */
const CASES: [string, string, RegExp, RegExp][] = [
  [
    "nosocat",
    'RUN rm -f "$(command -v socat)"',
    /lacks socat \(the relays of agent_network: restricted to the task server and the allowed hosts\) on its PATH/,
    /add socat to the image \(Debian: apt-get install socat\), or set auto_build_image: true/,
  ],
  [
    "nogit",
    'RUN rm -f "$(command -v git)"',
    /lacks git \(the agent's commits on its branch\) on its PATH: every attempt would fail inside it/,
    /add git to the image \(Debian: apt-get install git\), or set auto_build_image: true/,
  ],
];

for (const [name, removal, message, fix] of CASES) {
  Deno.test({
    name: `container: an image without ${name.slice(2)} is image_incomplete before run_started, ` +
      "naming it and the fix; doctor says the same; nothing is spawned",
    ignore,
    async fn() {
      if (!image.ok) return;
      const ref = await derivedTestImage(image, `agent-${name}`, [removal]);
      await using dir = await tempDir();
      await workspace(dir.path, ref);
      const err = await runPlan({ root: dir.path, out: () => {}, port: 0, app: SERVER_APP }).then(
        () => assert.fail("the run must not start"),
        (e) => e,
      );
      assert.ok(err instanceof ContainerError, String(err));
      assert.equal(err.kind, "image_incomplete", err.message);
      assert.match(err.message, message);
      assert.match(err.fix, fix);
      for (const state of [".sdd/runs", ".sdd/worktrees", ".sdd/runtime/pids"]) {
        const entries = await Array.fromAsync(Deno.readDir(join(dir.path, state))).catch(() => []);
        assert.deepEqual(entries, [], `${state} is empty: nothing ran`);
      }
      const check = (await runDoctor(dir.path)).find((c) => c.name.startsWith("isolation"))!;
      assert.equal(check.ok, false);
      assert.equal(check.detail, `ContainerError: ${err.message}`);
      assert.equal(check.fix, err.fix);
    },
  });
}

Deno.test({
  name: "container: socat is needed only when the agent's network relays something " +
    "(agent_network: none needs none)",
  ignore,
  async fn() {
    if (!image.ok) return;
    const ref = await derivedTestImage(image, "agent-nosocat", [CASES[0][1]]);
    const probe = (agentNetwork: string) =>
      probeIsolation({
        settings: containerSettings(ServiceConfigSchema.parse({
          cli: "generic",
          roles: { backend: {} },
          isolation: "container",
          container: { image: ref, agent_network: agentNetwork },
        })),
        env: Deno.env.toObject(),
        binary: "deno",
        build: false,
      });
    const iso = await probe("none");
    assert.match(iso.label, /^container:/);
    await assert.rejects(() => probe("open"), /lacks socat \(the relays of agent_network: open/);
  },
});
