/**
 * The board tells the current truth through a real run under `review.require_approval`: a
 * request for changes, then a merge that conflicts and a new attempt. Real git, real scripted
 * agents, the real server and the operator's page kept open in the real browser the whole time,
 * as a user keeps it. Screenshots of each step go to tests/artifacts/.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { tempDir } from "./helpers.ts";
import {
  browserPage,
  openRunPage,
  projectionAgreed,
  rowsOf,
  until,
  watchedRun,
  workspace,
} from "./_e2e.ts";
import { screenshot } from "./browser/_harness.ts";

/** What the card of `task` shows, as drawn. */
async function card(page: Page, task: string) {
  const el = page.locator(`.columns [data-task-id="${task}"]`);
  return {
    column: await el.evaluate((e) => e.closest("[data-column]")!.getAttribute("data-column")),
    text: await el.innerText(),
    gates: await el.locator(".gate").count(),
    verdicts: await el.locator("[data-verdict]").count(),
    attempt: await el.locator("[data-attempt-number]").getAttribute("data-attempt-number")
      .catch(() => null),
  };
}

Deno.test("under approval, changes requested then a conflict and a new attempt: the card shows the current attempt only, one attempt number everywhere, the last receipt gives way to the new diff", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [
        { id: "left", script: [["write", "shared.txt", "left\n"], ["report", "left"]] },
        {
          // Every attempt before left lands writes shared.txt on a tree without it: add/add.
          id: "right",
          script: [["append", "shared.txt", "right\n"], ["report", "right"]],
        },
      ],
    }],
    "max_agents: 2\nreview:\n  require_approval: true\n",
  );
  const run = watchedRun(dir.path);
  const count = async (type: string, task: string) =>
    run.runId
      ? (await rowsOf(dir.path, run.runId)).filter((r) =>
        r.type === type && r.data.task_id === task
      )
        .length
      : 0;
  const review = (task: string, decision: string) =>
    fetch(`${run.url}/dashboard/review-board/runs/${run.runId}/tasks/${task}/review`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision }),
    }).then((r) => r.text());
  await until(
    "both to wait for review",
    async () =>
      (await count("task_completed", "left")) + (await count("task_completed", "right")) === 2,
  );

  await using browser = await browserPage();
  const page = browser.page;
  await openRunPage(page, run.url, run.runId, "right");
  // The page shows the board as the server folds it now (rows the run appends off the loop, such
  // as a reaped worktree's log, move the board after the card itself has moved).
  const current = async () =>
    (await page.locator("[data-projection-hash]").textContent()) ===
      (await (await fetch(`${run.url}/review-board/runs/${run.runId}`)).json()).projection_hash;
  const act = async (decision: string, note?: string) => {
    // As an operator would: a 412 (the board moved since the page loaded) means look again.
    for (let tries = 1;; tries++) {
      await until("the page to show the current board", current);
      await page.locator(`button[data-decision=${decision}]:not([disabled])`).waitFor();
      // The task changed since the operator looked (a new attempt came back): they look again.
      const changed = page.locator("[data-task-changed] button");
      if (await changed.count()) await changed.click();
      if (note) await page.fill(".actions textarea", note);
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.url().endsWith("/tasks/right/review")),
        page.click(`button[data-decision=${decision}]`),
      ]);
      if (answer.status() === 412 && tries < 3) continue;
      assert.equal(answer.status(), 200, await answer.text());
      return;
    }
  };
  await screenshot(page, "truth-1-both-need-review.png");

  // Attempt 1: the operator asks for changes; attempt 2 comes back for review.
  await act("request_changes", "name the file in the summary");
  await until("attempt 2 to finish", async () => (await count("task_completed", "right")) === 2);
  await page.locator('[data-column=needs_review] [data-task-id=right] [data-attempt-number="2"]')
    .waitFor();
  let right = await card(page, "right");
  assert.equal(right.verdicts, 0, `attempt 1's "request changes" is history: ${right.text}`);
  assert.equal(await page.locator("[data-review-receipt]").count(), 0, "attempt 1's receipt");
  await screenshot(page, "truth-2-attempt-2-needs-review.png");

  // left lands; the merge of attempt 2 conflicts, a rebase cannot help: attempt 3.
  await review("left", "merge");
  await until("left to land", async () => (await count("task_merged", "left")) === 1);
  await page.locator("[data-column=merged] [data-task-id=left]").waitFor();
  await act("merge");
  await until("attempt 3 to finish", async () => (await count("task_completed", "right")) === 3);
  await page.locator('[data-column=needs_review] [data-task-id=right] [data-attempt-number="3"]')
    .waitFor();
  await page.locator('[data-attempt="3"][data-outcome=completed]').waitFor();
  right = await card(page, "right");
  assert.equal(right.column, "needs_review");
  assert.equal(right.gates, 0, `attempt 2's merge conflict is history: ${right.text}`);
  assert.equal(right.verdicts, 0, `attempt 2's merge decision is history: ${right.text}`);
  assert.equal(right.attempt, "3");
  assert.equal(
    await page.locator("[data-review-receipt]").count(),
    0,
    "the receipt of attempt 2's merge does not sit beside attempt 3's diff",
  );
  await page.locator('button[data-decision="merge"]:not([disabled])').waitFor();
  // The history is in the task detail, newest first, each attempt with its one number.
  const attempts = page.locator("[data-attempt]");
  assert.deepEqual(
    await attempts.evaluateAll((els) => els.map((e) => e.getAttribute("data-attempt"))),
    ["3", "2", "1"],
  );
  assert.match(
    await attempts.nth(1).innerText(),
    /Attempt 2[\s\S]*merge by[\s\S]*merge_conflict: shared\.txt/,
  );
  assert.match(await attempts.nth(2).innerText(), /Attempt 1[\s\S]*request changes by/);
  assert.equal(
    await page.locator(".attempts").evaluate((ol) => getComputedStyle(ol).listStyleType),
    "none",
    "no second numbering beside the attempts' own",
  );
  await screenshot(page, "truth-3-attempt-3-needs-review.png");

  await review("right", "merge");
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  assert.equal(await Deno.readTextFile(join(dir.path, "shared.txt")), "left\nright\n");

  // The terminal, the journal and the page number the attempts alike; after the request for
  // changes (no attempt counted) the terminal also says what the retry limit counts.
  const terminal = run.lines.join("\n");
  for (const [n, counted] of [[1, ""], [2, ", counted as 1 of 3"], [3, ", counted as 2 of 3"]]) {
    assert.match(
      terminal,
      new RegExp(`right: agent \\S+ started \\(backend, attempt ${n}${counted}\\)`),
    );
  }
  assert.match(
    terminal,
    /right: merge conflict in shared\.txt.*\(failed attempt 1 of 3; retrying\)/,
  );
  const rows = await rowsOf(dir.path, run.runId);
  assert.deepEqual(
    rows.filter((r) => r.type === "task_claimed" && r.data.task_id === "right")
      .map((r) => r.data.attempt),
    [1, 2, 3],
  );
  assert.equal(rows.find((r) => r.type === "merge_conflict")?.data.attempt, 2);
  // The projection itself is unchanged: it keeps the last gates and verdict (DESIGN.md §5).
  const receipt = await projectionAgreed(dir.path, run.runId);
  const projected = receipt.board.columns.merged.find((c) => c.task_id === "right")!;
  assert.deepEqual(projected.gates, [{ kind: "merge_conflict", detail: "shared.txt" }]);
});
