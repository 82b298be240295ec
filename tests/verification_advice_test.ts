/**
 * What the verification ALERT advises, as `service status` prints it from a workspace's files: a
 * user whose tasks' roles have quality gates is never told to add them (their gates never ran on
 * those completions), and a user whose roles have none is told which roles lack them.
 */
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { cli } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { newTask, TaskInputSchema } from "../lib/tasks/task.ts";
import { taskFile, taskYaml } from "../lib/tasks/persist.ts";
import { workspacePaths } from "../lib/workspace.ts";

const unverified = (task: string) =>
  JSON.stringify({
    task_id: task,
    session_id: `s-${task}`,
    timestamp: Math.floor(Date.now() / 1000),
    tests_run: false,
    quality_gates_run: false,
    completion_signals_checked: false,
    verified: false,
  }) + "\n";

/** A workspace with `config` and three closed backend tasks whose completions are unverified. */
async function workspaceWith(root: string, config: string): Promise<void> {
  await Deno.writeTextFile(join(root, "service.yaml"), config);
  const paths = workspacePaths(root);
  for (const [i, id] of ["a", "b", "c"].entries()) {
    const task = newTask(
      { ...TaskInputSchema.parse({ title: `task ${id}`, role: "backend" }), id },
      { status: "CLOSED", seq: i + 1, now: new Date().toISOString() },
    );
    const file = taskFile(paths, "closed", id);
    await Deno.mkdir(dirname(file), { recursive: true });
    await Deno.writeTextFile(file, taskYaml(task));
  }
  await Deno.mkdir(join(root, ".sdd/metrics"), { recursive: true });
  await Deno.writeTextFile(
    join(root, ".sdd/metrics/verification_nudges.jsonl"),
    unverified("a") + unverified("b") + unverified("c"),
  );
}

Deno.test("service status: with quality gates on the tasks' role, the ALERT says they never ran instead of advising to add them", async () => {
  await using dir = await tempDir();
  await workspaceWith(
    dir.path,
    "cli: generic\ncli_command: [echo]\nroles:\n  backend:\n    quality_gates:\n" +
      "      - { name: unit, command: deno --version }\n",
  );
  const human = await cli(dir.path, "status");
  assert.match(human.out, /ALERT: 3 of 3 completions unverified/, human.out);
  assert.match(human.out, /Their quality gates are configured but never ran/, human.out);
  assert.doesNotMatch(human.out, /Add quality_gates/, human.out);
  const json = JSON.parse((await cli(dir.path, "status", "--json")).out);
  assert.match(json.verification_advice, /^Their quality gates are configured/);
  assert.equal(json.verification_nudge.threshold_exceeded, true);
  assert.equal("verification_advice" in json.verification_nudge, false, "spec §2.10 unchanged");
});

Deno.test("service status: with no gate for the tasks' role, the ALERT names the role that has none", async () => {
  await using dir = await tempDir();
  await workspaceWith(
    dir.path,
    "cli: generic\ncli_command: [echo]\nroles:\n  backend: {}\n  docs:\n    quality_gates:\n" +
      "      - { name: spell, command: deno --version }\n",
  );
  const human = await cli(dir.path, "status");
  assert.match(human.out, /Add quality_gates \(none apply to role backend\)/, human.out);
});
