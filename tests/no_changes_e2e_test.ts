/**
 * A completion whose diff is empty is not merged (issue 35): no `task_merged` row naming another
 * task's merge commit as its own, the terminal and the board say "no changes", the card is not
 * under Merged and shows no "+0 −0, 0 files", and a merge decision on it is refused. Real git,
 * the scripted agent, the real server and the page in the real browser.
 */
import assert from "node:assert/strict";
import {
  browserPage,
  openRunPage,
  pageColumn,
  projectionAgreed,
  rowsOf,
  serveBoard,
  sh,
  watchedRun,
  workspace,
} from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

Deno.test("a task that changes nothing closes with no changes: not merged, no commit of its own, the board says so", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [
    { name: "first", steps: [{ id: "a", script: [["write", "a.txt", "a\n"], ["report", "a"]] }] },
    {
      name: "second",
      depends: ["first"],
      steps: [{ id: "noop", script: [["print", "nothing to change"], ["report", "all fine"]] }],
    },
  ]);
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  const rows = await rowsOf(dir.path, result.runId);
  const about = (id: string) => rows.filter((r) => r.data.task_id === id).map((r) => r.type);
  assert.ok(about("a").includes("task_merged"));
  assert.ok(!about("noop").includes("task_merged"), "nothing of noop was merged");
  assert.ok(about("noop").includes("task_unchanged"));
  assert.ok(about("noop").includes("task_completed"), "its agent did complete");
  assert.ok(
    run.lines.some((l) =>
      /noop: no changes: its work changes nothing on the target branch/.test(l)
    ),
    run.lines.join("\n"),
  );
  assert.ok(!run.lines.some((l) => /noop: merged/.test(l)));
  // main has a's merge and nothing that names noop.
  const log = await sh(dir.path, "log", "--format=%s", "main");
  assert.doesNotMatch(log, /noop/);
  assert.match(log, /service: merge a /);
  const receipt = await projectionAgreed(dir.path, result.runId);
  assert.ok(!receipt.board.columns.merged.some((c) => c.task_id === "noop"));

  // The board page: the card says "no changes", not merged, and shows no +0 −0.
  await using server = await serveBoard(dir.path);
  await using b = await browserPage();
  await openRunPage(b.page, server.url, result.runId);
  assert.deepEqual(await pageColumn(b.page, "merged"), ["a"]);
  const card = b.page.locator(`.columns [data-task-id="noop"]`);
  assert.equal(await card.getAttribute("data-state"), "unchanged");
  const text = await card.innerText();
  assert.match(text, /no changes/);
  assert.doesNotMatch(text, /\+0/);
  assert.equal(await card.locator("[data-diff-summary]").count(), 0);
  // The task detail offers no decision, and the server refuses a merge of it.
  await openRunPage(b.page, server.url, result.runId, "noop");
  await b.page.getByText("Nothing to decide: its work changes nothing").waitFor({
    timeout: 20_000,
  });
  const refused = await fetch(
    `${server.url}/dashboard/review-board/runs/${result.runId}/tasks/noop/review`,
    {
      method: "POST",
      headers: { "content-type": "application/json", origin: server.url },
      body: JSON.stringify({ decision: "merge" }),
    },
  );
  const body = await refused.json();
  assert.equal(refused.status, 409, JSON.stringify(body));
  assert.equal(body.error.code, "no_changes");
});
