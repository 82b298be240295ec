/**
 * `service status` and `service stop` run in a subdirectory of the repository answer for the
 * repository's workspace, as git does (issue 35): the real CLI as child processes started in
 * `src/lib/`, without `--root`, against a detached run.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, cli, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

/** The CLI started in `cwd`, without `--root`. */
async function cliIn(cwd: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    cwd,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, out: text };
}

Deno.test("status and stop in a subdirectory of the repository answer for its run", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(root, [{
    name: "s",
    steps: [{ id: "slow", script: [["sleep", 60000], ["report", "late"]] }],
  }]);
  const sub = join(root, "src", "lib");
  await Deno.mkdir(sub, { recursive: true });
  try {
    const started = await cli(root, "run", "--detach", "--port", "0");
    assert.equal(started.code, 0, started.out);
    const status = await cliIn(sub, "status");
    assert.equal(status.code, 0, status.out);
    assert.match(status.out, /server http:\/\/127\.0\.0\.1:\d+/, status.out);
    assert.match(status.out, /tasks: 1 in run run-/);
    const stop = await cliIn(sub, "stop");
    assert.equal(stop.code, 0, stop.out);
    assert.doesNotMatch(stop.out, /No run in progress/i);
    const state = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    assert.equal(state.status, "stopped");
    // Nothing was written for a workspace at the subdirectory.
    await assert.rejects(Deno.stat(join(sub, ".sdd")));
  } finally {
    await cli(root, "stop");
  }
});
