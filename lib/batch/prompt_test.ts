import assert from "node:assert/strict";
import type { RoleTemplate } from "../roles/templates.ts";
import type { Task } from "../tasks/task.ts";
import { namedPaths } from "./files.ts";
import { batchPrompt } from "./prompt.ts";

const TEMPLATE: RoleTemplate = {
  role: "backend",
  dir: "/t",
  builtin: true,
  systemPrompt: "You are a backend engineer.",
  taskPrompt:
    "# Task {{task_id}}: {{title}}\n\n{{goal}}\n\nFiles: {{owned_files}}\n\n{{reporting}}",
  config: {},
};

const TASK = {
  id: "t1",
  title: "Shout",
  role: "backend",
  goal: "Upper-case a.txt",
  priority: 2,
  scope: "small",
  complexity: "medium",
  depends_on: [],
  owned_files: ["a.txt"],
  completion_signals: [],
} as unknown as Task;

Deno.test("batchPrompt(): the role's words, the goal, the answer's form instead of the task API, and the files", () => {
  const p = batchPrompt(TEMPLATE, TASK, [
    { path: "a.txt", text: "alpha" },
    { path: "new.txt" },
    { path: "logo.png", omitted: "binary file: its text is not shown" },
  ], "the last patch did not apply");
  assert.match(p.system, /^You are a backend engineer\.\n\nYou answer once, without tools/);
  assert.match(p.user, /^# Task t1: Shout\n\nUpper-case a\.txt/);
  assert.match(p.user, /ONE unified diff/);
  assert.doesNotMatch(p.user, /curl|SERVICE_SERVER_URL/, "no reporting instructions");
  assert.match(p.user, /### a\.txt\n\n```\nalpha\n```/);
  assert.match(p.user, /### new\.txt\n\n\(does not exist yet\)/);
  assert.match(p.user, /### logo\.png\n\n\(binary file: its text is not shown\)/);
  assert.match(p.user, /## An earlier attempt\n\nthe last patch did not apply\n$/);
});

Deno.test("namedPaths(): literals, directories and globs against the tracked files", () => {
  const tracked = ["src/a.py", "src/b.py", "src/sub/c.py", "README.md"];
  assert.deepEqual(namedPaths(["src/*.py", "README.md", "docs/new.md"], tracked), [
    "src/a.py",
    "src/b.py",
    "README.md",
    "docs/new.md",
  ]);
  assert.deepEqual(namedPaths(["./src/sub/"], tracked), ["src/sub/c.py"]);
  assert.deepEqual(namedPaths(["src/a.py", "src/*.py"], tracked), ["src/a.py", "src/b.py"]);
});
