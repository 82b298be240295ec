import assert from "node:assert/strict";
import { join } from "node:path";
import { tempRepo } from "../git/_test_repo.ts";
import { ensureExcludeLines, ensureServiceExcluded, ensureSkillFilesExcluded } from "./exclude.ts";
import { commitPartialWork, createWorktree } from "./worktrees.ts";

Deno.test("ensureExcludeLines() keeps existing content and is idempotent", async () => {
  await using repo = await tempRepo();
  const path = join(repo.root, ".git/info/exclude");
  await Deno.writeTextFile(path, "# mine\n*.swp"); // no trailing newline
  await ensureExcludeLines(repo.root, [".sdd/"]);
  await ensureExcludeLines(repo.root, [".sdd/"]);
  assert.equal(await Deno.readTextFile(path), "# mine\n*.swp\n.sdd/\n");
});

Deno.test("ensureServiceExcluded() hides .sdd/ from the user's git status", async () => {
  await using repo = await tempRepo();
  await repo.write(".sdd/runs/r1/journal.jsonl", "{}\n");
  assert.match(await repo.git(["status", "--porcelain"]), /\.sdd\//);
  await ensureServiceExcluded(repo.root);
  assert.equal(await repo.git(["status", "--porcelain"]), "");
});

Deno.test("injected skill files are never staged by git add -A in an agent worktree", async () => {
  await using repo = await tempRepo();
  const wt = await createWorktree(repo.root, "s1", await repo.git(["rev-parse", "main"]));
  // Resolved per worktree: git 2.39 reads the common info/exclude from every worktree.
  const excludeFile = await ensureSkillFilesExcluded(wt.path);
  assert.equal(excludeFile, join(repo.root, ".git/info/exclude"));
  await repo.write(".claude/skills/service-review/SKILL.md", "injected\n", wt.path);
  await repo.write(".claude/skills/service-x.md", "injected\n", wt.path);
  await repo.write(".claude/skills/mine/SKILL.md", "the agent's own skill\n", wt.path);
  await repo.write("work.txt", "done\n", wt.path);
  const { committed } = await commitPartialWork(wt.path, "work");
  assert.ok(committed);
  const files = (await repo.git(["ls-tree", "-r", "--name-only", "HEAD"], wt.path)).split("\n");
  assert.deepEqual(files.sort(), [".claude/skills/mine/SKILL.md", "README.md", "work.txt"]);
  assert.equal(await repo.git(["status", "--porcelain"], wt.path), "");
});

Deno.test("a per-worktree info/exclude is not read by git 2.39 (why the common file is used)", async () => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(join(repo.root, ".git/info/exclude"), ".sdd/\n");
  const wt = await createWorktree(repo.root, "s2", await repo.git(["rev-parse", "main"]), {
    skillPrefix: "other-",
  });
  const gitDir = await repo.git(["rev-parse", "--absolute-git-dir"], wt.path);
  await Deno.mkdir(join(gitDir, "info"), { recursive: true });
  await Deno.writeTextFile(join(gitDir, "info/exclude"), "/.claude/skills/service-*\n");
  await repo.write(".claude/skills/service-a.md", "x\n", wt.path);
  assert.match(await repo.git(["status", "--porcelain"], wt.path), /\?\? \.claude\//);
});
