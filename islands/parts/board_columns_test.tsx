import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { BoardColumns } from "./board_columns.tsx";
import { manyCardReceipt } from "../../tests/_fixtures.ts";
import type { OutlineTask } from "../../lib/board/activity_types.ts";

function countOf(html: string, column: string): number {
  const m = new RegExp(`data-column="${column}"[^]*?data-count="(\\d+)"`).exec(html);
  assert.ok(m, `column ${column} rendered`);
  return Number(m[1]);
}

Deno.test("BoardColumns renders all five columns with their card counts", () => {
  const html = renderToString(<BoardColumns board={manyCardReceipt(7).board} />);
  assert.deepEqual(
    ["queued", "running", "gated", "needs_review", "merged"].map((c) => countOf(html, c)),
    [2, 2, 1, 1, 1],
  );
  assert.equal((html.match(/class="card"/g) ?? []).length, 7);
});

Deno.test("BoardColumns shows an empty board as five columns counting 0", () => {
  const board = manyCardReceipt(0).board;
  const html = renderToString(<BoardColumns board={board} />);
  for (const c of ["queued", "running", "gated", "needs_review", "merged"]) {
    assert.equal(countOf(html, c), 0);
  }
});

Deno.test("BoardColumns cards show id, title, role, diff summary, gates and verdict", () => {
  const html = renderToString(<BoardColumns board={manyCardReceipt(5).board} selected="t-0004" />);
  assert.match(html, /t-0002/);
  assert.match(html, /Task number 2/);
  assert.match(html, /<em>dev<\/em>/);
  assert.match(html, /\+2<\/span> <span class="minus">−1<\/span>, 2 files/);
  assert.match(html, /test_passes: deno test exited 1/);
  assert.match(html, /<strong>merge<\/strong> by alice/);
  assert.match(html, /aria-pressed="true" data-task-id="t-0004"/);
});

Deno.test("BoardColumns with the run outline: a card of a new attempt drops the old gates, a FAILED card says so", () => {
  const board = manyCardReceipt(5).board; // t-0002 gated, t-0004 merged
  const task = (id: string, over: Partial<OutlineTask>): [string, OutlineTask] => [id, {
    task_id: id,
    depends_on: [],
    planned: true,
    state: "running",
    attempts: 1,
    rebases: 0,
    merge_decided: false,
    ...over,
  }];
  const tasks = new Map([
    task("t-0002", {
      state: "failed",
      reason: "gave up",
      attempts: 3,
      current_since: 1,
      gated_index: 2,
    }),
    task("t-0004", { state: "merged", attempts: 2, current_since: 9 }),
  ]);
  const html = renderToString(<BoardColumns board={board} tasks={tasks} />);
  assert.match(html, /data-task-id="t-0002" data-state="failed">.*?FAILED<\/span>.*?attempt 3/);
  assert.doesNotMatch(html, /t-0002.*?data-standing-reason/, "its gate rows say why");
  assert.match(html, /test_passes: deno test exited 1/, "the failed attempt's own gates stay");
  assert.doesNotMatch(html, /by alice/, "t-0004's verdict was on an earlier attempt");
});

Deno.test("BoardColumns: a card says where its agent runs, from the outline (the fold is not asked)", () => {
  const board = manyCardReceipt(3).board;
  const outline = (id: string, isolation: string): [string, OutlineTask] => [id, {
    task_id: id,
    depends_on: [],
    planned: true,
    state: "running",
    attempts: 1,
    rebases: 0,
    merge_decided: false,
    isolation,
  }];
  const image = "ab".repeat(32);
  const tasks = new Map([
    outline("t-0000", `container:podman:${image}`),
    outline("t-0001", "worktree"),
  ]);
  const html = renderToString(<BoardColumns board={board} tasks={tasks} />);
  assert.match(
    html,
    new RegExp(
      `data-isolation="container:podman:${image}"[^>]*>agent: in a podman container \\(image abababababab\\)`,
    ),
  );
  assert.match(html, /data-isolation="worktree"[^>]*>agent: as a host process/);
  assert.equal(
    html.match(/data-isolation=/g)?.length,
    2,
    "a card without an outline entry says nothing",
  );
});
