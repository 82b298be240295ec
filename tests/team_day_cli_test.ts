/**
 * The command line as a team uses it every day (issue 35): the real CLI as a child process over
 * a real git workspace and the scripted agent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, cli, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

Deno.test("`service run` stopped by Ctrl-C exits 130, as a shell reports an interrupted command; its work is kept", async () => {
  await using dir = await tempDir();
  const flag = join(dir.path, ".sdd-test-flag");
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "long",
      script: [["write", "w.txt", "work\n"], [
        "run",
        `while [ ! -f ${flag} ]; do sleep 0.1; done`,
      ], ["report"]],
    }],
  }]);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"],
    env: { NO_COLOR: "1", SERVICE_KILL_GRACE_S: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const pids = join(dir.path, ".sdd/runtime/pids");
  const started = async () => {
    try {
      for await (const _ of Deno.readDir(pids)) return true;
    } catch { /* not yet */ }
    return false;
  };
  for (let i = 0; i < 600 && !(await started()); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(await started(), "the agent started");
  child.kill("SIGINT");
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 130, text);
  assert.match(text, /stopped/);
  const state = JSON.parse(
    await Deno.readTextFile(join(dir.path, ".sdd/runtime/orchestrator.json")),
  );
  assert.equal(state.status, "stopped");
  const kept = await cli(dir.path, "status");
  assert.match(kept.out, /stopped/);
});
