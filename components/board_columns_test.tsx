import assert from "node:assert/strict";
import { renderToString } from "preact-render-to-string";
import { BoardColumns } from "./board_columns.tsx";
import { manyCardReceipt } from "../tests/_fixtures.ts";

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
