/**
 * A copied secret never reaches `main`'s history (issue 35): with `worktree.copy: [".env"]` one
 * agent commits `.env` (forced) and a coverage report itself, another only stages them with
 * `git add -f`. After the real run, no commit reachable from main holds `.env` or
 * `coverage/lcov.info` (`git show <c>:.env` fails on every one), the work landed, and the
 * journal and the task detail say what was kept out.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { rowsOf, sh, watchedRun, workspace } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { taskDetail } from "../lib/review/activity.ts";
import { workspacePaths } from "../lib/workspace.ts";

const SECRET = "API_KEY=sk-live-do-not-commit";

Deno.test("copied and ignored files an agent forced in never enter a commit reachable from main", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await workspace(
    root,
    [{
      name: "s",
      steps: [
        {
          id: "commits",
          script: [
            ["write", "app.txt", "app\n"],
            ["write", "coverage/lcov.info", "TN:\n"],
            [
              "run",
              "git add -f .env coverage/lcov.info app.txt && git -c user.name=a -c user.email=a@x commit -qm 'agent: everything'",
            ],
            [
              "run",
              "git rm -q --cached .env && git -c user.name=a -c user.email=a@x commit -qm 'agent: untrack env'",
            ],
            ["report", "committed"],
          ],
        },
        {
          id: "stages",
          script: [
            ["write", "lib.txt", "lib\n"],
            ["run", "git add -f .env lib.txt"],
            ["report", "staged"],
          ],
        },
      ],
    }],
    'max_agents: 1\nworktree:\n  copy: [".env"]\n',
  );
  // The user's secret, ignored in their checkout, copied into every worktree.
  await Deno.writeTextFile(join(root, ".gitignore"), ".env\n");
  await Deno.writeTextFile(join(root, ".env"), SECRET + "\n");
  await sh(root, "add", ".gitignore");
  await sh(root, "commit", "-q", "-m", "ignore .env");
  const run = watchedRun(root);
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  assert.equal(await sh(root, "show", "main:app.txt"), "app\n");
  assert.equal(await sh(root, "show", "main:lib.txt"), "lib\n");
  // Every commit reachable from main, and every ref the service keeps.
  const commits = (await sh(root, "rev-list", "--all")).split("\n").filter(Boolean);
  for (const c of commits) {
    for (const path of [".env", "coverage/lcov.info"]) {
      const shown = await new Deno.Command("git", {
        args: ["cat-file", "-e", `${c}:${path}`],
        cwd: root,
        stderr: "null",
      }).output();
      assert.equal(shown.success, false, `commit ${c} holds ${path}`);
    }
  }
  const all = await sh(root, "log", "--all", "-p", "--format=%H %s");
  assert.ok(!all.includes("sk-live-do-not-commit"), "the secret is in no commit's diff");
  assert.equal(await Deno.readTextFile(join(root, ".env")), SECRET + "\n", "the user's file");
  // The journal and the task detail say what was kept out, and that commits were rewritten.
  const rows = await rowsOf(root, result.runId);
  const kept = rows.filter((r) => r.type === "task_files_kept_out");
  assert.deepEqual(
    kept.map((r) => [r.data.task_id, r.data.paths, r.data.rewritten_commits]).sort(),
    // What `stages` only staged never reached a commit: its index is rebuilt from its branch
    // when its agent ends (lib/worktrees/trees.ts settleWorktree), so nothing had to be kept out.
    [["commits", [".env", "coverage/lcov.info"], 2]],
  );
  const detail = await taskDetail(workspacePaths(root), result.runId, "commits");
  assert.deepEqual(detail.task.attempts[0].kept_out, {
    paths: [".env", "coverage/lcov.info"],
    rewritten_commits: 2,
  });
  assert.ok(
    run.lines.some((l) =>
      /commits: kept out of its commits \(ignored or copied files\): \.env, coverage\/lcov\.info; the agent's 2 commit\(s\) holding them were rewritten into one/
        .test(l)
    ),
    run.lines.join("\n"),
  );
});
