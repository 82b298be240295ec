import assert from "node:assert/strict";
import { join } from "node:path";
import { openBoard } from "./_harness.ts";

const APPENDER = new URL("../../lib/journal/journal_file.ts", import.meta.url).href;

Deno.test("board page: updates within a second after another process appends", async () => {
  await using board = await openBoard();
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=golden`);
  await page.locator(".live[data-state=live]").waitFor();
  const boardFetches: number[] = [];
  page.on("request", (r) => {
    if (/\/review-board\/runs\/golden$/.test(r.url())) boardFetches.push(Date.now());
  });

  const journal = join(board.runDir("golden"), "journal.jsonl");
  const script = `import { appendEvents } from ${JSON.stringify(APPENDER)};
for (let i = 0; i < 5; i++) {
  await appendEvents(${JSON.stringify(journal)}, [{ type: "task_claimed",
    data: { task_id: "t-other-" + i, title: "From another process" } }]);
}`;
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--ext=ts", script],
    stdout: "null",
    stderr: "piped",
  }).output();
  const appendedAt = Date.now();
  assert.equal(child.code, 0, new TextDecoder().decode(child.stderr));
  await page.locator("[data-column=running] [data-task-id=t-other-4]").waitFor({ timeout: 1000 });
  const latency = Date.now() - appendedAt;
  console.log(`board updated ${latency} ms after the other process's append`);
  assert.ok(latency < 1000);
  assert.equal(await page.textContent("[data-column=running] [data-count]"), "5");
  await page.waitForTimeout(1200); // a poll interval: no second report of the same append
  assert.ok(boardFetches.length <= 2, `coalesced refreshes, got ${boardFetches.length}`);
});
