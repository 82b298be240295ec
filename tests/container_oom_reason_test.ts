/**
 * An agent whose container runs out of memory is said to have: the task's reason — in the
 * terminal, the journal and `service status` — names the memory limit the kernel's OOM killer
 * enforced (learned from conmon, podman's container monitor), instead of a bare exit code; and
 * nothing of it lands in the checkout (conmon's `oom` file included). Real containers of the test
 * image (podman 4: conmon's records); skips, loudly, where no runtime answers.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { journalOf, planYaml, sh } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { IMAGE_AGENT, skipping, testImage } from "./_container_image.ts";

const image = await testImage();
const ignore = skipping(image) || !image.ok || image.runtime !== "podman";

/** Allocates 16 MiB at a time until the kernel ends it. */
const HOG = "deno eval 'const a = []; for (;;) a.push(new Uint8Array(16 << 20).fill(1));'";

Deno.test({
  name: "container: an agent that exhausts its memory fails with a reason naming the memory " +
    "limit it hit, and leaves nothing in the checkout",
  ignore,
  async fn() {
    if (!image.ok) return;
    await using dir = await tempDir();
    await sh(dir.path, "init", "-q", "-b", "main");
    await sh(dir.path, "config", "user.email", "e2e@localhost");
    await sh(dir.path, "config", "user.name", "e2e");
    await Deno.writeTextFile(join(dir.path, "README.md"), "# oom\n");
    await Deno.writeTextFile(
      join(dir.path, "service.yaml"),
      `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", IMAGE_AGENT])}\n` +
        "roles:\n  backend: {}\nisolation: container\nmemory_mb: 256\ncpu_cores: 1\n" +
        `container:\n  image: ${image.ref}\n`,
    );
    await Deno.writeTextFile(
      join(dir.path, "plan.yaml"),
      planYaml([{ name: "s", steps: [{ id: "hog", script: [["run", HOG]] }] }]),
    );
    await sh(dir.path, "add", "-A");
    await sh(dir.path, "commit", "-q", "-m", "init");
    const lines: string[] = [];
    const result = await runPlan({
      root: dir.path,
      out: (line: string) => lines.push(line),
      port: 0,
      app: SERVER_APP,
    });
    assert.equal(result.status, "failed");
    const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
    const failed = rows.find((r) => r.type === "task_failed");
    assert.ok(failed, "the task failed");
    assert.match(String(failed.data.reason), /out of memory at memory_mb 256/);
    assert.ok(
      lines.some((l) => /hog: FAILED: .*out of memory at memory_mb 256/.test(l)),
      lines.join("\n"),
    );
    const files = (await Array.fromAsync(Deno.readDir(dir.path))).map((e) => e.name).sort();
    assert.deepEqual(files, [".git", ".sdd", "README.md", "plan.yaml", "service.yaml"]);
  },
});
