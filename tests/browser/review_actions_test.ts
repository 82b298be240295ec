import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../../lib/journal/journal_file.ts";
import { openBoard, screenshot } from "./_harness.ts";

Deno.test("board page: approving a task shows the receipt and the card's verdict", async () => {
  await using board = await openBoard();
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  const seen = await page.locator("[data-projection-hash]").textContent();
  await page.fill("textarea", "looks good");
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.method() === "POST"),
    page.click("button[data-decision=approve]"),
  ]);
  assert.equal(request.headers()["if-match"], `"${seen}"`);
  const receipt = page.locator("[data-review-receipt]");
  await receipt.waitFor();
  const text = (await receipt.textContent())!;
  assert.match(text, /decisionapprove/);
  assert.match(text, /dashboard-operator \(operator\)/);
  assert.match(text, new RegExp(`projection hash seen${seen}`));
  assert.match(text, /journal entry hash[0-9a-f]{64}/);
  assert.match(text, /audit entry hash[0-9a-f]{64}/);
  const verdict = page.locator("[data-task-id=t-docs] [data-verdict]");
  await verdict.waitFor();
  assert.match((await verdict.textContent())!, /approve by dashboard-operator: “looks good”/);
  assert.notEqual(await page.locator("[data-projection-hash]").textContent(), seen);
  const journal = await Deno.readTextFile(join(board.runDir("golden"), "journal.jsonl"));
  assert.match(journal.trimEnd().split("\n").at(-1)!, /"decision":"approve"/);
  await screenshot(page, "approved.png");
});

Deno.test("board page: a review on a board that moved is refused (412) and offers a reload", async () => {
  await using board = await openBoard();
  const { page } = board;
  await page.route("**/events*", (route) => route.abort()); // no live refresh: the view goes stale
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator("button[data-decision=approve]").waitFor();
  await appendEvents(join(board.runDir("golden"), "journal.jsonl"), [
    { type: "task_claimed", data: { task_id: "t-late", title: "Late task" } },
  ]);
  await page.click("button[data-decision=approve]");
  const error = page.locator("[data-action-error='412']");
  await error.waitFor();
  assert.match((await error.textContent())!, /board changed since you loaded it/);
  assert.equal(await page.locator("[data-task-id=t-late]").count(), 0);
  await error.getByRole("button", { name: "Reload board" }).click();
  await page.locator("[data-column=running] [data-task-id=t-late]").waitFor();
});

Deno.test("board page: a tampered journal renders with JOURNAL TAMPERED and no actions", async () => {
  await using board = await openBoard({
    prepare: async (root) => {
      const path = join(root, ".sdd/runs/golden/journal.jsonl");
      const text = await Deno.readTextFile(path);
      await Deno.writeTextFile(
        path,
        text.replace('"title":"Write the parser"', '"title":"Hacked"'),
      );
    },
  });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  await page.getByText("JOURNAL TAMPERED").waitFor();
  assert.equal(await page.locator("[data-journal-verified=false]").count(), 1);
  assert.match((await page.textContent("[data-task-id=t-parser]"))!, /Hacked/, "still renders");
  for (const decision of ["approve", "request_changes", "merge"]) {
    assert.ok(await page.locator(`button[data-decision=${decision}]`).isDisabled());
  }
  await screenshot(page, "tampered.png");
});
