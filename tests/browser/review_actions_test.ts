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

Deno.test("board page: a task whose diff changed while the operator looked at it is not merged blind: 412 until they look again", async () => {
  await using board = await openBoard();
  const { page } = board;
  const run = board.runDir("golden");
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator(".live[data-state=live]").waitFor();
  await page.locator("button[data-decision=merge]").waitFor();
  const seen = await page.locator("[data-projection-hash]").textContent();
  // Meanwhile the task's work is replaced (another process appends; the page refreshes live).
  const diff = "diff --git a/late.md b/late.md\nnew file mode 100644\n--- /dev/null\n" +
    "+++ b/late.md\n@@ -0,0 +1 @@\n+nobody read this\n";
  const sha = Array.from(
    new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(diff))),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  await Deno.writeTextFile(join(run, "review/diffs/t-docs.diff"), diff);
  await appendEvents(join(run, "journal.jsonl"), [{
    type: "task_diff_captured",
    data: { task_id: "t-docs", sha256: `sha256:${sha}`, added: 1, removed: 0, files: 1 },
  }]);
  await page.locator("[data-task-id=t-docs]").getByText("+1").waitFor();
  assert.notEqual(await page.locator("[data-projection-hash]").textContent(), seen);
  const notice = page.locator("[data-task-changed]");
  await notice.waitFor();
  assert.match((await notice.textContent())!, /changed while you were looking at it/);

  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST"),
    page.click("button[data-decision=merge]"),
  ]);
  assert.equal(answer.status(), 412, "the merge names the board the operator saw");
  assert.equal(answer.request().headers()["if-match"], `"${seen}"`);
  await page.locator("[data-action-error='412']").waitFor();
  await screenshot(page, "task_changed_while_looking.png");
  assert.doesNotMatch(
    await Deno.readTextFile(join(run, "journal.jsonl")),
    /"decision":"merge","diff_sha256":"sha256:[0-9a-f]+","journal_head":"[0-9a-f]+","principal":"dashboard-operator"/,
  );

  await notice.getByRole("button", { name: "I have looked at it again" }).click();
  assert.equal(await notice.count(), 0);
  const [again] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST"),
    page.click("button[data-decision=merge]"),
  ]);
  assert.equal(again.status(), 200, await again.text());
  const { receipt } = await again.json();
  assert.equal(receipt.diff_sha256, `sha256:${sha}`);
  await page.locator("[data-review-receipt]").waitFor();
});

Deno.test("board page: a change elsewhere on the board does not stop a review of the task on screen", async () => {
  await using board = await openBoard();
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator(".live[data-state=live]").waitFor();
  await page.locator("button[data-decision=approve]").waitFor();
  await appendEvents(join(board.runDir("golden"), "journal.jsonl"), [
    { type: "task_claimed", data: { task_id: "t-late", title: "Late task" } },
  ]);
  await page.locator("[data-column=running] [data-task-id=t-late]").waitFor();
  assert.equal(await page.locator("[data-task-changed]").count(), 0);
  const [answer] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === "POST"),
    page.click("button[data-decision=approve]"),
  ]);
  assert.equal(answer.status(), 200, await answer.text());
  // Its own decision changes the task; that is no change behind the operator's back.
  await page.locator("[data-review-receipt]").waitFor();
  assert.equal(await page.locator("[data-task-changed]").count(), 0);
  await page.click("button[data-decision=request_changes]");
  await page.locator("[data-review-receipt]").getByText("request_changes").waitFor();
});

Deno.test("board page: a gated or FAILED task offers Approve only; Request changes and Merge are off and say why (no run would act on them)", async () => {
  await using board = await openBoard({
    prepare: (root) =>
      appendEvents(join(root, ".sdd/runs/golden/journal.jsonl"), [
        { type: "task_claimed", data: { task_id: "t-fails", session_id: "s-09", title: "Fails" } },
        {
          type: "task_verification_failed",
          data: {
            task_id: "t-fails",
            signals: [{ kind: "quality_gate", detail: "tests (exit 1)" }],
          },
        },
        { type: "task_failed", data: { task_id: "t-fails", reason: "gates failed" } },
      ]).then(() => {}),
  });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden&task=t-fails`);
  await page.locator("[data-column=gated] [data-task-id=t-fails]").waitFor();
  const why = page.locator("[data-actions-why]");
  await why.waitFor();
  assert.match((await why.textContent())!, /Merge and Request changes are off/);
  assert.match((await why.textContent())!, /service retry/);
  assert.ok(await page.locator("button[data-decision=approve]").isEnabled());
  assert.ok(await page.locator("button[data-decision=request_changes]").isDisabled());
  assert.ok(await page.locator("button[data-decision=merge]").isDisabled());
});
