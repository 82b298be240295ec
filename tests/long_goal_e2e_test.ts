/**
 * A task whose goal is longer than one command-line argument may be (Linux: 128 KiB) cannot start
 * any agent CLI, which takes its prompt as one argument: the run says so, and what to do, after
 * one attempt, instead of retrying the same refusal and ending on the OS's bare words.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runDeno, tempDir } from "./helpers.ts";

Deno.test("service run: a goal longer than an agent's command line may be fails at its first attempt, saying the goal is too long and what to do", async () => {
  await using dir = await tempDir();
  const git = (...args: string[]) =>
    new Deno.Command("git", {
      args: ["-c", "user.email=t@l", "-c", "user.name=t", ...args],
      cwd: dir.path,
    }).output();
  await git("init", "-q", "-b", "main");
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    "cli: generic\ncli_command: [sh, -c, 'exit 0']\nroles:\n  backend: {}\n",
  );
  const goal = "x".repeat(200_000); // one YAML scalar of 200 KB
  await Deno.writeTextFile(
    join(dir.path, "plan.yaml"),
    `stages:\n  - name: s\n    steps:\n      - id: long\n        goal: ${goal}\n        role: backend\n`,
  );
  await git("add", "-A");
  await git("commit", "-q", "-m", "init");
  const r = await runDeno(["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"], {
    clearEnv: true,
  });
  assert.notEqual(r.code, 0, r.text);
  assert.match(r.text, /long: FAILED: could not start the agent: its command line is longer than/);
  assert.match(r.text, /shorten the task's goal/);
  assert.doesNotMatch(r.text, /attempt 2|Argument list too long/, r.text.slice(-2000));
});
