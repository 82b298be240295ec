import assert from "node:assert/strict";
import { openBoard, screenshot } from "./_harness.ts";

Deno.test("board page: with tokens configured it asks for one, then loads and goes live", async () => {
  const name = `BOARD_BROWSER_TOKEN_${crypto.randomUUID().slice(0, 8)}`;
  Deno.env.set(name, "browser-test-token");
  try {
    await using board = await openBoard({
      tokens: [{ principal: "reviewer", scope: "reader", token_env: name }],
      viewport: { width: 420, height: 900 },
    });
    const { page } = board;
    await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
    const error = page.locator("[data-error='401']");
    await error.waitFor();
    assert.match((await error.textContent())!, /needs a bearer token/);

    await page.fill("input[name=token]", "browser-test-token");
    await page.click("button[type=submit]");
    await page.locator("[data-column=needs_review] [data-task-id=t-docs]").waitFor();
    await page.locator(".live[data-state=live]").waitFor();
    assert.equal(
      await page.evaluate(() => sessionStorage.getItem("service.review-board.token")),
      "browser-test-token",
    );

    await page.click("button[data-decision=approve]");
    const refused = page.locator("[data-action-error='403']");
    await refused.waitFor();
    assert.match((await refused.textContent())!, /operator scope/);
    await screenshot(page, "narrow_reader.png");

    await page.reload(); // the token survives a reload of this tab
    await page.locator("[data-column=needs_review] [data-task-id=t-docs]").waitFor();
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 420, `no horizontal scrolling in a narrow window (${width}px)`);
  } finally {
    Deno.env.delete(name);
  }
});
