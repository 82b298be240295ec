/**
 * Speed figures of the board page in a real browser (printed; bounds are generous so the test
 * only fails on a real regression): a 500-card board, expanding a 5 000-line file, and a
 * 20 000-line diff that must list its files without rendering their lines.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../../lib/journal/journal_file.ts";
import { manyCardEvents, syntheticDiff, writeRunWithDiff } from "../_fixtures.ts";
import { openBoard, screenshot } from "./_harness.ts";

async function prepare(root: string): Promise<void> {
  const runs = join(root, ".sdd", "runs");
  await appendEvents(join(runs, "many", "journal.jsonl"), manyCardEvents(500));
  await writeRunWithDiff(runs, "big5k", "t-big", syntheticDiff(1, 5000));
  await writeRunWithDiff(runs, "big20k", "t-big", syntheticDiff(20, 1000));
}

Deno.test("board page: 500 cards, a 5 000-line file and a 20 000-line diff stay responsive", async () => {
  await using board = await openBoard({ prepare });
  const { page } = board;

  let started = Date.now();
  await page.goto(`${board.url}/dashboard/review-board?run=many`);
  await page.locator("[data-task-id=t-0499]").waitFor();
  const boardMs = Date.now() - started;
  assert.equal(await page.locator("button.card").count(), 500);
  console.log(`500-card board: page load to all cards shown ${boardMs} ms`);

  await page.goto(`${board.url}/dashboard/review-board?run=big5k&task=t-big`);
  await page.locator("button.file-toggle").waitFor();
  const expand = await page.evaluate(async () => {
    const button = document.querySelector<HTMLButtonElement>("button.file-toggle")!;
    const t0 = performance.now();
    button.click();
    await new Promise<void>((resolve) => {
      const check = () =>
        document.querySelector("#diff-file-0 .lines") ? resolve() : setTimeout(check, 0);
      check();
    });
    const rendered = performance.now() - t0;
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
    return {
      rendered,
      painted: performance.now() - t0,
      rows: document.querySelectorAll("#diff-file-0 .l").length,
    };
  });
  console.log(
    `expand a 5 000-line file: ${expand.rows} rows in DOM after ${
      expand.rendered.toFixed(0)
    } ms, next frame at ${expand.painted.toFixed(0)} ms`,
  );
  assert.equal(expand.rows, 5001, "the hunk header and all 5 000 lines");
  assert.ok(expand.painted < 3000);
  await page.locator("#diff-file-0 .l.add").nth(4990).scrollIntoViewIfNeeded();
  await screenshot(page, "big_diff_expanded_end.png", false);

  started = Date.now();
  await page.goto(`${board.url}/dashboard/review-board?run=big20k&task=t-big`);
  await page.locator("button.file-toggle").nth(19).waitFor();
  const listMs = Date.now() - started;
  assert.equal(await page.locator(".lines").count(), 0, "no lines rendered until expanded");
  const responsive = await page.evaluate(() => {
    const t0 = performance.now();
    return new Promise<number>((r) => setTimeout(() => r(performance.now() - t0), 0));
  });
  console.log(
    `20 000-line diff (20 files): page load to file list ${listMs} ms, ` +
      `main thread answers a timer in ${responsive.toFixed(1)} ms`,
  );
  assert.ok(responsive < 200);
});
