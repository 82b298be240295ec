/**
 * A run whose journal rows carry markup in every string the page shows — titles, roles, notes,
 * principals, summaries, setup commands, paths, follow-ups, a pull request's URL, diff file names
 * and lines — rendered in a real browser: all of it is text, nothing runs.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { journalText } from "../helpers.ts";
import { openBoard, screenshot } from "./_harness.ts";

const P = (tag: string) =>
  `<img src=x onerror="window.__pwned='${tag}'"><script>window.__pwned='${tag}'</script>` +
  `"'&amp;<b>${tag}</b>`;
const NAME = `src/<img src=x onerror=window.__pwned='file'>.ts`;
const DIFF =
  `diff --git a/${NAME} b/${NAME}\nnew file mode 100644\n--- /dev/null\n+++ b/${NAME}\n` +
  `@@ -0,0 +1,2 @@\n+${P("line")}\n+</pre><script>window.__pwned='line2'</script>\n`;

async function writeHostileRun(root: string): Promise<void> {
  const dir = join(root, ".sdd", "runs", "xss");
  await Deno.mkdir(join(dir, "review", "diffs"), { recursive: true });
  await Deno.writeTextFile(join(dir, "review", "diffs", "t-x.diff"), DIFF);
  const digest = new Uint8Array(
    await crypto.subtle.digest("SHA-256", new TextEncoder().encode(DIFF)),
  );
  const sha = Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
  const events = [
    {
      type: "run_started",
      data: {
        run_id: "xss",
        plan: P("plan"),
        planned: [
          { task_id: "t-x", title: P("planned"), role: P("role"), depends_on: [] },
          { task_id: "t-y", title: P("planned-y"), role: "docs", depends_on: ["t-x", P("dep")] },
        ],
      },
    },
    {
      type: "task_claimed",
      data: {
        task_id: "t-x",
        session_id: "s-1",
        title: P("title"),
        role: P("role"),
        model: P("model"),
        adapter: P("adapter"),
        worker: P("worker"),
      },
    },
    {
      type: "task_worktree_prepared",
      data: {
        task_id: "t-x",
        session_id: "s-1",
        copied: [P("copied")],
        linked: [P("linked")],
        setup: [{ command: P("setup"), exit_code: 0, ms: 3 }],
      },
    },
    {
      type: "task_diff_captured",
      data: { task_id: "t-x", sha256: `sha256:${sha}`, added: 2, removed: 0, files: 1 },
    },
    { type: "task_protected_paths", data: { task_id: "t-x", paths: [NAME, P("protected")] } },
    {
      type: "task_owned_files_exceeded",
      data: { task_id: "t-x", paths: [P("owned")], owned_files: [P("owned-files")] },
    },
    { type: "task_completed", data: { task_id: "t-x", summary: P("summary") } },
    {
      type: "task_pr_opened",
      data: { task_id: "t-x", number: 7, url: "javascript:window.__pwned='pr'", branch: P("br") },
    },
    {
      type: "task_review_decision",
      data: {
        task_id: "t-x",
        decision: "request_changes",
        principal: P("principal"),
        note: P("note"),
      },
    },
    {
      type: "task_follow_up",
      data: { task_id: "t-x", seq: 1, principal: P("fu-principal"), text: P("follow-up") },
    },
  ];
  await Deno.writeTextFile(join(dir, "journal.jsonl"), journalText(events as never));
}

Deno.test("board page: markup in every journal string and diff name renders as text and runs nothing", async () => {
  await using board = await openBoard({ prepare: writeHostileRun });
  const { page, url } = board;
  const dialogs: string[] = [];
  page.on("dialog", (d) => {
    dialogs.push(d.message());
    d.dismiss();
  });
  await page.goto(`${url}/dashboard/review-board?run=xss&task=t-x`);
  await page.locator("[data-journal-verified=true]").waitFor();
  await page.getByText("diff verified").waitFor();
  for (const file of await page.locator("button[aria-expanded=false]").all()) await file.click();
  await page.getByText("window.__pwned='line2'").waitFor();
  const seen = await page.evaluate(() => ({
    pwned: (window as unknown as { __pwned?: string }).__pwned ?? null,
    injected: document.querySelectorAll("img, b, body script:not([type=module])").length,
    scriptLinks:
      [...document.querySelectorAll("a")].filter((a) =>
        /^javascript:/i.test(a.getAttribute("href") ?? "")
      ).length,
    text: document.body.innerText,
  }));
  assert.equal(seen.pwned, null, "no markup ran");
  assert.equal(seen.injected, 0, "no element was made from journal text");
  assert.equal(seen.scriptLinks, 0);
  assert.deepEqual(dialogs, []);
  for (const tag of ["title", "role", "note", "principal", "summary", "setup", "follow-up"]) {
    assert.ok(seen.text.includes(`&amp;<b>${tag}</b>`), `${tag} is shown as the text it is`);
  }
  assert.ok(seen.text.includes(NAME), "the diff's file name is shown as text");
  await screenshot(page, "hostile_journal.png");
});
