/**
 * The board's verification alert in the real browser (spec §3.3, §8): a toast for 10 s the first
 * time the threshold trips while the page is open (the page reads the summary on `/events`
 * activity), a quiet indicator while the alert holds, and no second toast.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../../lib/journal/journal_file.ts";
import * as ev from "../../lib/journal/events.ts";
import { openBoard, screenshot } from "./_harness.ts";

const record = (task: string, verified: boolean) =>
  JSON.stringify({
    task_id: task,
    session_id: `s-${task}`,
    timestamp: Date.now() / 1000,
    tests_run: verified,
    quality_gates_run: false,
    completion_signals_checked: false,
    verified,
  }) + "\n";

Deno.test("board page: the verification alert toasts for 10 s the first time it trips, then a quiet indicator stays", async () => {
  await using board = await openBoard({
    prepare: async (root) => {
      await Deno.mkdir(join(root, ".sdd/metrics"), { recursive: true });
      await Deno.writeTextFile(
        join(root, ".sdd/metrics/verification_nudges.jsonl"),
        record("t1", true) + record("t2", false),
      );
    },
  });
  const { page } = board;
  const ledger = join(board.root, ".sdd/metrics/verification_nudges.jsonl");
  const journal = join(board.runDir("golden"), "journal.jsonl");
  const activity = (task: string, verified: boolean) =>
    appendEvents(journal, [ev.taskVerificationRecorded({
      task_id: task,
      session_id: `s-${task}`,
      tests_run: verified,
      quality_gates_run: false,
      completion_signals_checked: false,
      verified,
    })]);
  await page.goto(`${board.url}/dashboard/review-board?run=golden`);
  await page.locator(".live[data-state=live]").waitFor();
  await page.waitForTimeout(300);
  assert.equal(await page.locator("[data-verification-alert]").count(), 0, "2 records: no alert");

  // A third, unverified completion trips the threshold (2 of 3 > 0.3, min 3).
  await Deno.writeTextFile(ledger, record("t3", false), { append: true });
  await activity("t3", false);
  const toast = page.locator("[data-verification-toast]");
  await toast.waitFor({ timeout: 5000 });
  const shownAt = Date.now();
  assert.match((await toast.textContent())!, /ALERT: 2 of 3 completions unverified/);
  assert.match((await toast.textContent())!, /Recent: t3, t2/);
  assert.equal(await toast.getAttribute("data-timeout-ms"), "10000");
  assert.match((await page.textContent("[data-verification-alert]"))!, /2\/3 unverified/);
  await screenshot(page, "verification_toast.png", false);
  await toast.waitFor({ state: "detached", timeout: 15_000 });
  const shownFor = Date.now() - shownAt;
  console.log(`toast shown for ${shownFor} ms`);
  assert.ok(shownFor > 9000 && shownFor < 11_500, `toast lasted ${shownFor} ms`);
  assert.equal(await page.locator("[data-verification-alert]").count(), 1, "the indicator stays");

  // Reset (the ledger moved aside): the indicator goes; tripping again shows no second toast.
  await Deno.rename(ledger, ledger + ".old");
  await activity("t4", true);
  await page.locator("[data-verification-alert]").waitFor({ state: "detached", timeout: 5000 });
  await Deno.writeTextFile(ledger, record("a", false) + record("b", false) + record("c", false));
  await activity("c", false);
  await page.locator("[data-verification-alert]").waitFor({ timeout: 5000 });
  await page.waitForTimeout(500);
  assert.equal(await toast.count(), 0, "one toast per page");
});
