/**
 * The command line as a team uses it every day (issue 35): the real CLI as a child process over
 * a real git workspace and the scripted agent.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, cli, planYaml, workspace } from "./_e2e.ts";
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

Deno.test("`service retry --all` retries the latest run's FAILED and CANCELLED tasks, never those earlier finished runs left", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{ name: "s", steps: [{ id: "old", script: [["fail", "broken"]] }] }]);
  const first = await cli(dir.path, "run", "--port", "0");
  assert.equal(first.code, 1, first.out);
  await Deno.writeTextFile(
    join(dir.path, "next.yaml"),
    planYaml([{ name: "s", steps: [{ id: "new", script: [["fail", "broken too"]] }] }]),
  );
  const second = await cli(dir.path, "run", "next.yaml", "--port", "0");
  assert.equal(second.code, 1, second.out);
  const retried = await cli(dir.path, "retry", "--all");
  assert.equal(retried.code, 0, retried.out);
  assert.match(retried.out, /new: OPEN again \(was FAILED\)/);
  assert.doesNotMatch(retried.out, /old: /);
  assert.match(
    retried.out,
    /1 FAILED or CANCELLED task\(s\) of earlier runs left as they are \(old\)/,
  );
  const again = await cli(dir.path, "retry", "old");
  assert.match(again.out, /old: OPEN again \(was FAILED\)/, "named, an older one is retried");
});
