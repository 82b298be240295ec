/** `service cancel` while no run is live reaps the task's worktree as a run's reap would. */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runDeno, tempDir } from "./helpers.ts";
import { sh, workspace } from "./_e2e.ts";

function cli(root: string, ...args: string[]) {
  return runDeno(["run", "-A", CLI, "--root", root, ...args], {
    env: { SERVICE_KILL_GRACE_S: "1", NO_COLOR: "1" },
  });
}

Deno.test("cancelling a stopped run's task reaps its worktree, branch entry and admin files, keeping its work on the rescue ref", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const flag = join(root, "..", `${crypto.randomUUID()}.go`);
  await workspace(root, [{
    name: "s",
    steps: [{
      id: "long",
      script: [["write", "w.txt", "work\n"], ["run", `while [ ! -f ${flag} ]; do sleep 0.1; done`]],
    }],
  }]);
  const started = await cli(root, "run", "--detach", "--port", "0");
  assert.equal(started.code, 0, started.text);
  const pidDir = join(root, ".sdd/runtime/pids");
  const agents = () => {
    try {
      return [...Deno.readDirSync(pidDir)].length;
    } catch {
      return 0;
    }
  };
  for (let i = 0; i < 600 && agents() === 0; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal(agents(), 1, "one live agent");
  const stopped = await cli(root, "stop");
  assert.equal(stopped.code, 0, stopped.text);
  const trees = [...Deno.readDirSync(join(root, ".sdd/worktrees"))].map((e) => e.name);
  assert.equal(trees.length, 1, "the stop keeps the worktree for the resume");
  const session = trees[0];

  const cancel = await cli(root, "cancel", "long");
  assert.equal(cancel.code, 0, cancel.text);
  assert.match(cancel.text, /long: CANCELLED \(was ORPHANED\)/);
  assert.match(
    cancel.text,
    new RegExp(
      `long \\(CANCELLED\\): worktree of ${session} removed; its unmerged work is kept at refs/service/rescue/${session}`,
    ),
  );
  assert.deepEqual([...Deno.readDirSync(join(root, ".sdd/worktrees"))], [], "worktree reaped");
  assert.doesNotMatch(await sh(root, "worktree", "list"), new RegExp(session));
  assert.equal(
    await Deno.stat(join(root, ".git/worktrees", session)).then(() => true, () => false),
    false,
    "its .git/worktrees entry is gone",
  );
  assert.equal(await sh(root, "show", `refs/service/rescue/${session}:w.txt`), "work\n");
  const doctor = await cli(root, "doctor");
  assert.match(doctor.text, new RegExp(`rescued work: .*refs/service/rescue/${session}`));
  assert.doesNotMatch(doctor.text, /warn {2}worktrees:/);
  await Deno.writeTextFile(flag, "");
});
