import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { commitPartialWork, createWorktree } from "../worktrees/worktrees.ts";
import { BUILTIN_SKILLS } from "./builtin_skills.ts";
import { injectSkills, serviceSkillFiles } from "./skills.ts";
import { claudeAdapter } from "./adapters/claude.ts";
import { codexAdapter } from "./adapters/codex.ts";

Deno.test("the embedded skills equal templates/skills/ (run scripts/embed_templates.ts after an edit)", async () => {
  const dir = new URL("../../templates/skills/", import.meta.url).pathname;
  const names: string[] = [];
  for await (const e of Deno.readDir(dir)) if (e.isDirectory) names.push(e.name);
  assert.deepEqual(Object.keys(BUILTIN_SKILLS).sort(), names.sort());
  for (const name of names) {
    assert.equal(BUILTIN_SKILLS[name], await Deno.readTextFile(join(dir, name, "SKILL.md")));
  }
});

Deno.test("the injected skill tells the agent how to report, fail and send heartbeats", () => {
  const [skill] = serviceSkillFiles();
  assert.equal(skill.path, ".claude/skills/service-task-api/SKILL.md");
  assert.match(skill.text, /^---\nname: service-task-api\ndescription: .+\n---\n/);
  for (const endpoint of ["complete", "fail", "heartbeat"]) {
    assert.ok(
      skill.text.includes(`"$SERVICE_SERVER_URL/tasks/$SERVICE_TASK_ID/${endpoint}"`),
      endpoint,
    );
  }
});

Deno.test("a Claude worktree gets the service's skill, excluded from git; other CLIs get none", async () => {
  await using repo = await tempRepo();
  const base = await repo.git(["rev-parse", "main"]);
  const wt = await createWorktree(repo.root, "s1", base);
  assert.deepEqual(await injectSkills(claudeAdapter, wt.path), [
    ".claude/skills/service-task-api/SKILL.md",
  ]);
  const text = await Deno.readTextFile(join(wt.path, ".claude/skills/service-task-api/SKILL.md"));
  assert.equal(text, BUILTIN_SKILLS["service-task-api"]);
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "", "git status shows it");
  await repo.write("work.txt", "done\n", wt.path);
  await commitPartialWork(wt.path, "work");
  const files = await repo.git(["ls-tree", "-r", "--name-only", "HEAD"], wt.path);
  assert.deepEqual(files.split("\n").sort(), ["README.md", "work.txt"], "the skill was staged");

  const other = await createWorktree(repo.root, "s2", base);
  assert.deepEqual(await injectSkills(codexAdapter, other.path), []);
  assert.equal(await repo.git(["status", "--porcelain", "--ignored"], other.path), "");
});

Deno.test("a skill file the repository itself tracks is left as it is", async () => {
  await using repo = await tempRepo();
  await repo.write(".claude/skills/service-task-api/SKILL.md", "the project's own\n");
  await repo.git(["add", "-f", "."]);
  await repo.git(["commit", "-q", "-m", "own skill"]);
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  assert.deepEqual(await injectSkills(claudeAdapter, wt.path), []);
  assert.equal(
    await Deno.readTextFile(join(wt.path, ".claude/skills/service-task-api/SKILL.md")),
    "the project's own\n",
  );
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
});
