/**
 * The probe before `run_started` does not wait for `<runtime> info` (the slowest call: it
 * gathers every fact of the host's storage) before it looks the image up and starts the trial
 * container: both run beside it under the user the runtime is expected to confirm, and the
 * trial runs again when info says otherwise. Driven through a wrapper of the real runtime on
 * PATH that records each call and makes `info` slow, so the order is certain. Skips, loudly,
 * where no runtime answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { probeIsolation } from "../lib/container/probe.ts";
import { guessUserPlan } from "../lib/container/probe.ts";
import { containerSettings } from "../lib/container/settings.ts";
import { ServiceConfigSchema } from "../lib/config/schema.ts";
import { ContainerError } from "../lib/container/errors.ts";
import { tempDir } from "./helpers.ts";
import { skipping, testImage } from "./_container_image.ts";

const image = await testImage();
const ignore = skipping(image);

/** A `podman`/`docker` on PATH that logs `start <verb>` and `end <verb>` around the real one. */
async function wrappedRuntime(dir: string, infoDelayS: number): Promise<{
  env: Record<string, string>;
  calls: () => Promise<string[]>;
}> {
  if (!image.ok) throw new Error("no runtime");
  const log = join(dir, "calls.log");
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  await Deno.writeTextFile(
    join(bin, image.runtime),
    `#!/bin/sh\necho "start $1" >>${log}\n` +
      `[ "$1" = info ] && sleep ${infoDelayS}\n` +
      `${image.bin} "$@"\nc=$?\necho "end $1" >>${log}\nexit $c\n`,
    { mode: 0o755 },
  );
  return {
    env: { ...Deno.env.toObject(), PATH: `${bin}:${Deno.env.get("PATH") ?? ""}` },
    calls: async () => (await Deno.readTextFile(log)).trim().split("\n"),
  };
}

function settings(ref: string) {
  return containerSettings(ServiceConfigSchema.parse({
    cli: "generic",
    roles: { backend: {} },
    isolation: "container",
    container: { image: ref },
  }));
}

Deno.test({
  name: "probe: the image lookup and the trial container run while `info` is still answering; " +
    "its answer confirms the user they ran as, so the trial is not repeated",
  ignore,
  async fn() {
    if (!image.ok) return;
    await using dir = await tempDir();
    const rt = await wrappedRuntime(dir.path, 1);
    const iso = await probeIsolation({
      settings: settings(image.ref),
      env: rt.env,
      binary: "deno",
    });
    const calls = await rt.calls();
    assert.equal(calls.filter((c) => c === "start run").length, 1, calls.join(", "));
    // The trial container had ended before info answered.
    assert.ok(calls.indexOf("end run") < calls.indexOf("end info"), calls.join(", "));
    assert.match(iso.label, /^container:(podman|docker):[0-9a-f]{12,}$/);
    assert.match(iso.binaryPath, /\/deno$/);
    assert.deepEqual(
      iso.user,
      guessUserPlan(image.runtime, { uid: Deno.uid() ?? 0, gid: Deno.gid() ?? 0 }, {}),
    );
  },
});

Deno.test({
  name: "probe: when `info` contradicts the expected user (another uid than the runtime's), the " +
    "trial container runs again as the user info gives, and that is the one the run uses",
  ignore,
  async fn() {
    if (!image.ok) return;
    await using dir = await tempDir();
    const rt = await wrappedRuntime(dir.path, 0.5);
    // As uid 1000 podman would be rootless (keep-id); the runtime here answers as it really is.
    const ids = { uid: Deno.uid() === 0 ? 1000 : 0, gid: 1000 };
    const guessed = guessUserPlan(image.runtime, ids, {});
    const iso = await probeIsolation({
      settings: settings(image.ref),
      env: rt.env,
      binary: "deno",
      ids,
    }).catch((e) => e);
    if (iso instanceof ContainerError) {
      // A runtime that refuses the real plan for these ids (rootless docker) says so: no guess.
      assert.equal(iso.kind, "user_mapping");
      return;
    }
    const calls = await rt.calls();
    if (guessed && JSON.stringify(guessed) !== JSON.stringify(iso.user)) {
      assert.equal(calls.filter((c) => c === "start run").length, 2, calls.join(", "));
      assert.ok(calls.lastIndexOf("start run") > calls.indexOf("end info"), calls.join(", "));
    }
    assert.equal(iso.user.uid, Deno.uid() === 0 ? 1000 : 0);
  },
});

Deno.test({
  name: "probe: a missing image is image_missing, as before, although it was looked up while " +
    "`info` answered; no trial container was started",
  ignore,
  async fn() {
    if (!image.ok) return;
    await using dir = await tempDir();
    const rt = await wrappedRuntime(dir.path, 0.3);
    const err = await probeIsolation({
      settings: settings("localhost/service-no-such-image:never"),
      env: rt.env,
      binary: "deno",
    }).catch((e) => e);
    assert.ok(err instanceof ContainerError, String(err));
    assert.equal(err.kind, "image_missing", err.message);
    assert.ok(!(await rt.calls()).includes("start run"));
  },
});

Deno.test("guessUserPlan(): podman is rootless exactly as a non-root user on its own host; remote runtimes are not guessed", () => {
  const cases: [Parameters<typeof guessUserPlan>, string[] | undefined][] = [
    [["podman", { uid: 0, gid: 0 }, {}], ["--user", "65532:65532"]],
    [["podman", { uid: 1000, gid: 1000 }, {}], ["--userns=keep-id", "--user", "1000:1000"]],
    [["podman", { uid: 1000, gid: 1000 }, { CONTAINER_HOST: "ssh://x" }], undefined],
    [["podman", { uid: 0, gid: 0 }, { CONTAINER_CONNECTION: "remote" }], undefined],
    [["docker", { uid: 1000, gid: 1000 }, {}], ["--user", "1000:1000"]],
    [
      ["docker", { uid: 1000, gid: 1000 }, { DOCKER_HOST: "unix:///run/user/1000/d.sock" }],
      undefined,
    ],
    [["docker", { uid: 0, gid: 0 }, { DOCKER_CONTEXT: "rootless" }], undefined],
  ];
  for (const [args, want] of cases) {
    assert.deepEqual(guessUserPlan(...args)?.args, want, JSON.stringify(args));
  }
});
