import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../../lib/journal/journal_file.ts";
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
  await page.waitForTimeout(200);
  const settled = boardFetches.length;
  assert.ok(settled <= 5, `at most one refresh per append burst, got ${settled} for 5 appends`);
  await page.waitForTimeout(1200); // a poll interval: the stat fallback does not report again
  assert.equal(boardFetches.length, settled, "no duplicate refresh for the same append");
});

Deno.test("board page: the activity stream reconnects after failures and refetches", async () => {
  await using board = await openBoard();
  const { page } = board;
  let attempts = 0;
  await page.route("**/events*", (route) => (++attempts <= 1 ? route.abort() : route.continue()));
  await page.goto(`${board.url}/dashboard/review-board?run=golden`);
  await page.locator(".live[data-state=reconnecting]").waitFor();
  await page.locator(".live[data-state=live]").waitFor({ timeout: 10_000 });
  assert.ok(attempts >= 2, `reconnected after a failed attempt (${attempts} attempts)`);
  await appendEvents(join(board.runDir("golden"), "journal.jsonl"), [
    { type: "task_claimed", data: { task_id: "t-after-reconnect" } },
  ]);
  await page.locator("[data-task-id=t-after-reconnect]").waitFor({ timeout: 2000 });
});
