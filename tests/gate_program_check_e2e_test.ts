/**
 * A quality gate that runs a program the checkout has but git does not track (an ignored
 * `node_modules/.bin/tape`) would fail every task's gates on every attempt: `service run`
 * refuses before `run_started`, naming the fix, and `doctor` says the same
 * (lib/runner/gate_programs.ts); a step's `test_passes` naming it as an argument too. With the
 * link configured doctor is satisfied.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { tempDir } from "./helpers.ts";
import { cli, sh } from "./_e2e.ts";

Deno.test("service run refuses a gate whose program only the checkout has, and doctor says why; with worktree.symlink doctor is satisfied", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await sh(root, "init", "-q", "-b", "main");
  await Deno.writeTextFile(join(root, ".gitignore"), "node_modules/\n");
  await Deno.mkdir(join(root, "node_modules/.bin"), { recursive: true });
  await Deno.writeTextFile(join(root, "node_modules/.bin/check"), "#!/bin/sh\nexit 0\n");
  await Deno.chmod(join(root, "node_modules/.bin/check"), 0o755);
  const config = `cli: generic
cli_command: ["true"]
quality_gates:
  - {name: tests, command: node_modules/.bin/check}
roles:
  backend: {}
`;
  await Deno.writeTextFile(join(root, "service.yaml"), config);
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    "name: p\nstages:\n  - name: s\n    steps:\n      - {id: a, title: A, role: backend, goal: g}\n",
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-qm", "init");

  const refused = await cli(root, "run", "plan.yaml");
  assert.equal(refused.code, 1, refused.out);
  assert.match(refused.out, /RunError: quality gate tests: it uses node_modules\/\.bin\/check/);
  assert.match(refused.out, /fix: link node_modules into every worktree/);
  assert.equal(
    await Deno.stat(join(root, ".sdd/runs")).then((s) => s.isDirectory, () => false),
    false,
    "nothing was started",
  );
  const doctor = await cli(root, "doctor");
  assert.match(doctor.out, /FAIL {2}quality gate tests: it uses node_modules\/\.bin\/check/);

  // A step's own test_passes that names the path as an argument is refused the same way.
  await Deno.writeTextFile(join(root, "service.yaml"), config.replace(/quality_gates:\n.*\n/, ""));
  await Deno.writeTextFile(
    join(root, "plan.yaml"),
    "name: p\nstages:\n  - name: s\n    steps:\n      - {id: a, title: A, role: backend, " +
      "goal: g, completion_signals: [{test_passes: sh node_modules/.bin/check}]}\n",
  );
  await sh(root, "commit", "-qam", "a step's own gate");
  const refusedStep = await cli(root, "run", "plan.yaml");
  assert.equal(refusedStep.code, 1, refusedStep.out);
  assert.match(refusedStep.out, /RunError: test_passes of a: it uses node_modules\/\.bin\/check/);

  await Deno.writeTextFile(
    join(root, "service.yaml"),
    config + "worktree:\n  symlink: [node_modules]\n",
  );
  await sh(root, "commit", "-qam", "link node_modules");
  const doctored = await cli(root, "doctor");
  assert.doesNotMatch(doctored.out, /quality gate tests/);
});
