/**
 * The board as a keyboard-only operator and a screen reader meet it, on a run of 200 tasks: each
 * decision (approve, request changes, merge) is made through the page with keys alone, the
 * detail is reached without walking every card, and a card whose title is hostile (markup, a
 * right-to-left override, 10 kB) stays a card.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { appendEvents } from "../../lib/journal/journal_file.ts";
import type { JournalEvent } from "../../lib/journal/row.ts";
import { sha256Hex } from "../../lib/journal/hash.ts";
import { syntheticDiff } from "../_fixtures.ts";
import { openBoard, screenshot } from "./_harness.ts";

const TASKS = 200;
/** Markup, an override that is never closed, and 10 kB. */
const HOSTILE = "<img src=x onerror=alert(1)><b>bold</b> \u202Egpj.exe " + "W".repeat(10_000);
const id = (i: number) => `t-${String(i).padStart(4, "0")}`;

/** 200 tasks waiting for review, each with its captured diff; t-0000's title is hostile. */
async function prepare(root: string): Promise<void> {
  const dir = join(root, ".sdd", "runs", "r200");
  await Deno.mkdir(join(dir, "review", "diffs"), { recursive: true });
  const events: JournalEvent[] = [{ type: "run_started", data: { run_id: "r200", plan: "p" } }];
  for (let i = 0; i < TASKS; i++) {
    const text = i === 0
      ? syntheticDiff(1, 3).replaceAll("src/generated_0.ts", "src/\u202Egpj.exe")
      : syntheticDiff(1, 3);
    const bytes = new TextEncoder().encode(text);
    await Deno.writeFile(join(dir, "review", "diffs", `${id(i)}.diff`), bytes);
    events.push(
      {
        type: "task_claimed",
        data: { task_id: id(i), title: i === 0 ? HOSTILE : `Task ${i}`, role: "dev" },
      },
      {
        type: "task_diff_captured",
        data: {
          task_id: id(i),
          sha256: "sha256:" + sha256Hex(bytes),
          added: 3,
          removed: 0,
          files: 1,
        },
      },
      { type: "task_completed", data: { task_id: id(i) } },
    );
  }
  await appendEvents(join(dir, "journal.jsonl"), events);
}

/** What has the keyboard: `tag text` of the focused element. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const a = document.activeElement as HTMLElement;
    return `${a.tagName.toLowerCase()} ${(a.textContent ?? "").trim().slice(0, 80)}`;
  });
}

/** Tab (or Shift+Tab) until the focused element's text matches `what`; the number of presses. */
async function tabTo(page: Page, what: RegExp, limit = 30, key = "Tab"): Promise<number> {
  for (let n = 1; n <= limit; n++) {
    await page.keyboard.press(key);
    if (what.test(await focused(page))) return n;
  }
  throw new Error(`${limit} Tabs did not reach ${what}; the focus is on ${await focused(page)}`);
}

Deno.test("board page: on 200 tasks a keyboard alone approves, requests changes and merges", async () => {
  await using board = await openBoard({ prepare });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=r200`);
  await page.locator(`[data-task-id=${id(TASKS - 1)}]`).waitFor();
  const decisions: [string, RegExp, string][] = [
    [id(5), /^button Approve$/, "approve"],
    [id(120), /^button Request changes$/, "request_changes"],
    [id(199), /^button Merge$/, "merge"],
  ];
  for (const [task, button, decision] of decisions) {
    await page.locator(`button.card[data-task-id=${task}]`).focus();
    await page.keyboard.press("Enter");
    // The detail takes the keyboard, and is in view.
    await page.waitForFunction(() => document.activeElement?.id === "task-heading");
    assert.match(await focused(page), new RegExp(`^h2 Task ${task}`));
    assert.ok(await page.locator("#task-heading").isVisible());
    assert.equal(await tabTo(page, /^button Back to its card on the board$/), 1);
    await tabTo(page, /^textarea/);
    await page.keyboard.type(`reviewed ${task} by keyboard`);
    const presses = await tabTo(page, button);
    assert.ok(presses <= 3, `${presses} Tabs from the note to ${button}`);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === "POST"),
      page.keyboard.press("Enter"),
    ]);
    assert.equal(response.status(), 200, await response.text());
    await page.locator("[data-review-receipt]").waitFor();
    await page.locator(`[data-task-id=${task}] [data-verdict=${decision}]`).waitFor();
    // And back to where the operator was on the board.
    await tabTo(page, /^button Back to its card on the board$/, 30, "Shift+Tab");
    await page.keyboard.press("Enter");
    assert.match(await focused(page), new RegExp(`^button ${task}`));
  }
  const journal = await Deno.readTextFile(join(board.runDir("r200"), "journal.jsonl"));
  for (const [task, , decision] of decisions) {
    assert.match(
      journal,
      new RegExp(
        `"decision":"${decision}".*"task_id":"${task}"|"task_id":"${task}".*"decision":"${decision}"`,
      ),
    );
  }
});

Deno.test("board page: a card with a hostile 10 kB title stays a card, its text isolated", async () => {
  await using board = await openBoard({ prepare });
  const { page } = board;
  await page.goto(`${board.url}/dashboard/review-board?run=r200`);
  const hostile = page.locator(`button.card[data-task-id=${id(0)}]`);
  await hostile.waitFor();
  const plain = await page.locator(`button.card[data-task-id=${id(1)}]`).boundingBox();
  const box = (await hostile.boundingBox())!;
  assert.ok(box.height < plain!.height * 6, `the card is ${box.height} px tall`);
  // Markup is text, nothing ran, and the override stays inside the title.
  assert.equal(await page.locator("button.card img").count(), 0);
  assert.equal(await hostile.locator("bdi.title").count(), 1);
  assert.match(
    (await hostile.locator("bdi.title").textContent())!,
    /^<img src=x onerror=alert\(1\)><b>bold<\/b> ⟨U\+202E⟩gpj\.exe W+…$/,
  );
  // What a screen reader gets: a button named by the id and a bounded title, in a labelled list.
  const name = await hostile.evaluate((b) => (b.textContent ?? "").length);
  assert.ok(name < 400, `the card's text is ${name} characters`);
  const snapshot = await page.locator("main").ariaSnapshot();
  assert.match(snapshot, /region "Needs review 200 cards"/);
  // The detail shows the whole title.
  await hostile.click();
  await page.locator("#task-heading").waitFor();
  const detail = await page.locator(".detail").textContent();
  assert.ok(detail!.includes("W".repeat(10_000)), "the detail shows the whole title");
  assert.ok(detail!.includes("⟨U+202E⟩gpj.exe"), "the override is shown, not obeyed");
  // The file name an override would turn into `exe.jpg` reads as written too.
  assert.equal(
    await page.locator("button.file-toggle .path").first().textContent(),
    "src/⟨U+202E⟩gpj.exe",
  );
  // Wrapped: the page does not grow sideways.
  const overflow = await page.evaluate(() =>
    document.documentElement.scrollWidth - document.documentElement.clientWidth
  );
  assert.equal(overflow, 0, `the page is ${overflow} px wider than the window`);
  await screenshot(page, "hostile_title_card.png", false);
});
