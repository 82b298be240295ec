/**
 * The board page with a forged review: the journal was edited (who approved, and why) and
 * re-hashed, so its own chain recomputes; the page says the journal and the signed audit chain
 * disagree, names the row, and offers no action.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { rehashJournal } from "../helpers.ts";
import { openBoard, screenshot } from "./_harness.ts";

Deno.test("board page: a review row edited and re-hashed says the journal and the audit chain disagree, names the row, and offers no action", async () => {
  await using board = await openBoard();
  const { page, url } = board;
  const review = await fetch(`${url}/dashboard/review-board/runs/golden/tasks/t-docs/review`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ decision: "approve" }),
  });
  assert.equal(review.status, 200);
  const { receipt } = await review.json();
  const journal = join(board.runDir("golden"), "journal.jsonl");
  const seq = (await Deno.readTextFile(journal)).trim().split("\n").length - 1;
  await rehashJournal(journal, seq, (row) => {
    row.data = { ...row.data, principal: "mallory", note: "read it twice" };
  });
  assert.ok(receipt.audit_event_hash);

  await page.goto(`${url}/dashboard/review-board?run=golden&task=t-docs`);
  const banner = page.locator("[aria-label='journal receipt']");
  await banner.getByText("JOURNAL TAMPERED").waitFor();
  await banner.getByText(/the journal and the signed audit chain disagree/).waitFor();
  assert.match(
    (await banner.textContent())!,
    new RegExp(`row ${seq} of run golden records principal mallory, note sha256:[0-9a-f]{64}`),
  );
  for (const decision of ["approve", "request_changes", "merge"]) {
    assert.ok(await page.locator(`button[data-decision=${decision}]`).isDisabled());
  }
  await screenshot(page, "forged_review.png");
});
