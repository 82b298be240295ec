import assert from "node:assert/strict";
import { join } from "node:path";
import { openBoard, screenshot } from "./_harness.ts";

Deno.test("board page: expanding a file shows its hunk with numbered, coloured lines", async () => {
  await using board = await openBoard();
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-parser`);
  await page.waitForSelector("[data-column=merged] [data-task-id=t-parser]");
  assert.equal(
    await page.textContent("[data-column=needs_review] [data-count]"),
    "1",
  );
  const toggle = page.locator("button.file-toggle[data-path='parser.ts']");
  await toggle.waitFor();
  assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  await screenshot(page, "board.png");

  await toggle.focus();
  await page.keyboard.press("Enter"); // keyboard-operable
  assert.equal(await toggle.getAttribute("aria-expanded"), "true");
  const added = page.locator(".lines .l.add");
  assert.equal(await added.count(), 2);
  assert.equal(await added.nth(0).getAttribute("data-new"), "1");
  assert.equal(await added.nth(1).getAttribute("data-new"), "2");
  assert.equal(await added.nth(1).getAttribute("data-old"), null);
  assert.match((await added.nth(0).textContent())!, /\+export function parse/);
  const background = await added.nth(0).evaluate((el) => getComputedStyle(el).backgroundColor);
  assert.equal(background, "rgb(218, 251, 225)");
  await screenshot(page, "diff_expanded.png");

  await toggle.click();
  assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  assert.equal(await page.locator(".lines").count(), 0, "collapsed lines leave the DOM");
});

Deno.test("board page: a task without a captured diff says 'no diff captured'", async () => {
  await using board = await openBoard();
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden`);
  await page.click("[data-task-id=t-docs]");
  await page.getByText("no diff captured", { exact: true }).waitFor();
  await page.getByText("no evidence producers declared").waitFor();
  assert.match(page.url(), /\?run=golden&task=t-docs$/, "the selection is a deep link");
});

Deno.test("board page: an edited stored diff shows DIFF UNVERIFIED", async () => {
  await using board = await openBoard({
    prepare: async (root) => {
      const path = join(root, ".sdd/runs/golden/review/diffs/t-parser.diff");
      const text = await Deno.readTextFile(path);
      await Deno.writeTextFile(path, text.replace('split(",")', 'split(";")'));
    },
  });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-parser`);
  await page.locator("[data-diff-unverified]").waitFor();
  assert.equal(await page.textContent("[data-diff-unverified]"), "DIFF UNVERIFIED");
  assert.equal(await page.locator("[data-journal-verified=true]").count(), 1);
});
