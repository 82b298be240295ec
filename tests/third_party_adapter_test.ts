/**
 * A third-party adapter as a user adds one (spec §7.3 entry point): `adapters.<name>.module` in
 * service.yaml names a module in the repository; `service run` loads it, spawns its CLI (here the
 * scripted agent, declared as reading Claude Code skills), the agent finds the injected
 * `.claude/skills/service-task-api/SKILL.md` in its worktree, reports, and the work lands without
 * the skill file.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, cli, sh, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

Deno.test("adapters.<name>.module: `service run` drives a third-party CLI, which gets the injected skill", async () => {
  await using dir = await tempDir("third-party-");
  await workspace(dir.path, [{
    name: "build",
    steps: [{
      id: "hello",
      script: [
        [
          "run",
          "grep -q 'tasks/$SERVICE_TASK_ID/complete' .claude/skills/service-task-api/SKILL.md",
        ],
        ["write", "hello.txt", "hi\n"],
        ["report", "wrote hello.txt"],
      ],
    }],
  }]);
  await Deno.mkdir(join(dir.path, "adapters"));
  await Deno.writeTextFile(
    join(dir.path, "adapters/scripted.ts"),
    `export default {
  name: "scripted", binary: "deno", apiKeyEnv: [], passEnv: [],
  acceptsMcpConfig: false, supportsEffort: false, claudeSkills: true,
  buildArgv: (input) => ["run", "-A", ${JSON.stringify(AGENT)}, input.prompt],
  parseUsage: () => undefined,
};
`,
  );
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    "cli: scripted\nadapters:\n  scripted: { module: adapters/scripted.ts }\nroles:\n  backend: {}\n",
  );
  await sh(dir.path, "add", "-A");
  await sh(dir.path, "commit", "-q", "-m", "third-party adapter");

  const agents = await cli(dir.path, "agents", "--json");
  assert.equal(agents.code, 0, agents.out);
  assert.equal(JSON.parse(agents.out).configured, "scripted");

  const run = await cli(dir.path, "run", "plan.yaml");
  assert.equal(run.code, 0, run.out);
  assert.equal(await sh(dir.path, "show", "main:hello.txt"), "hi\n");
  const tree = await sh(dir.path, "ls-tree", "-r", "--name-only", "main");
  assert.ok(!tree.includes(".claude"), `the injected skill was merged:\n${tree}`);
  assert.equal(await sh(dir.path, "status", "--porcelain"), "");
});
