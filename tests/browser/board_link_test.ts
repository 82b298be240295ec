/**
 * The board link the service writes into pull requests' bodies and trackers' comments, followed
 * in a real browser from a page on another site: the page opens (it carries no data) and shows
 * the task, while that site still reads and writes nothing.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { openBoard, screenshot } from "./_harness.ts";

Deno.test("board page: its link in a pull request on another site opens the task, and that site still cannot review", async () => {
  await using board = await openBoard();
  const { page, url } = board;
  const link = `${url}/dashboard/review-board?run=golden&task=t-docs`;
  const tracker = "http://tracker.example/pr/7";
  await page.route(tracker, (route) =>
    route.fulfill({
      contentType: "text/html",
      body: `<!doctype html><p>Review board: <a id="board" href="${link}">${link}</a></p>
<script>fetch(${JSON.stringify(`${url}/dashboard/review-board/runs/golden/tasks/t-docs/review`)},
  { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" },
    body: '{"decision":"merge"}' }).finally(() => document.title = "sent");</script>`,
    }));
  await page.goto(tracker);
  await page.waitForFunction(() => document.title === "sent");
  const [opened] = await Promise.all([page.waitForNavigation(), page.click("#board")]);
  assert.equal(opened?.status(), 200, "the followed link opens the page, not a 403");
  await page.locator("button[data-decision=approve]:not([disabled])").waitFor();
  assert.equal(await page.locator("[data-journal-verified=true]").count(), 1);
  const journal = await Deno.readTextFile(join(board.runDir("golden"), "journal.jsonl"));
  assert.doesNotMatch(
    journal,
    /"decision":"merge","diff_sha256":null/,
    "the tracker page wrote nothing",
  );
  await screenshot(page, "board_link.png");
});
