/**
 * A file over `max_landed_file_mb` never lands unattended (DESIGN.md §18): a real git workspace,
 * the scripted agent as a real process writing a file over a small configured limit, the real run
 * loop and server. Its task waits for review with the file and its size (from git's objects) in
 * the journal (`task_oversized_files`), the terminal, `service status` and on its card; a harmless
 * task lands unattended beside it; an operator's merge on the board lands it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { cardFace } from "../lib/dashboard/card_face.ts";
import type { OutlineTask } from "../lib/board/activity_types.ts";
import type { Card } from "../lib/board/types.ts";
import { CardView } from "../islands/parts/card_view.tsx";
import { tempDir } from "./helpers.ts";
import { cli, journalOf, rowsOf, sh, until, workspace } from "./_e2e.ts";

/** 0.01 MB, in bytes: the limit the workspace configures. */
const LIMIT = Math.floor(0.01 * 1024 * 1024);

Deno.test("a file over max_landed_file_mb waits for review, named with its size in the journal, the terminal, status and the card; an operator's merge lands it", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [
        {
          id: "big",
          script: [["run", "yes 0123456789abcdef | head -c 20000 > dump.txt"], ["report"]],
        },
        { id: "plain", script: [["write", "notes.txt", "x\n"], ["report"]] },
      ],
    }],
    "max_landed_file_mb: 0.01\n",
  );
  const stop = new AbortController();
  const run = { url: "", runId: "", lines: [] as string[] };
  const result = runPlan({
    root: dir.path,
    port: 0,
    app: SERVER_APP,
    signal: stop.signal,
    out: (line) => {
      run.lines.push(line);
      const m =
        /review board \(live while the run lasts\): (http:\/\/[^/]+)\/dashboard\/review-board\?run=(\S+)/
          .exec(line);
      if (m) [run.url, run.runId] = [m[1], m[2]];
    },
  });
  const rows = async () => run.runId ? await rowsOf(dir.path, run.runId).catch(() => []) : [];
  const of = (all: Awaited<ReturnType<typeof rows>>, type: string, task: string) =>
    all.filter((r) => r.type === type && r.data.task_id === task);
  await until("the big task to be held and the plain one to land", async () => {
    const all = await rows();
    return of(all, "task_oversized_files", "big").length > 0 &&
      of(all, "task_merged", "plain").length > 0;
  });
  let all = await rows();
  assert.deepEqual(of(all, "task_merged", "big"), [], "it must not land unattended");
  assert.deepEqual(of(all, "task_oversized_files", "big")[0].data, {
    task_id: "big",
    files: [{ path: "dump.txt", bytes: 20000 }],
    limit_bytes: LIMIT,
  });
  assert.equal(of(all, "task_oversized_files", "plain").length, 0);
  assert.ok(
    run.lines.some((l) =>
      l.includes(
        "big: completed; it adds or grows a file over max_landed_file_mb (10485 bytes): " +
          "dump.txt (20000 bytes)",
      ) && l.includes("(max_landed_file_mb)")
    ),
    `the terminal says why it waits:\n${run.lines.join("\n")}`,
  );
  assert.equal(await sh(dir.path, "show", "main:dump.txt").catch(() => null), null);

  let status = "";
  await until("service status to name it", async () => {
    status = (await cli(dir.path, "status")).out;
    return status.includes("big OVERSIZED");
  });
  assert.match(
    status,
    /big OVERSIZED: its diff adds or grows dump\.txt \(20000 bytes\), over max_landed_file_mb \(10485 bytes\); it waits for an operator's merge on the board/,
  );

  const board = await (await fetch(`${run.url}/review-board/runs/${run.runId}`)).json();
  const card = (board.board.columns.needs_review as Card[]).find((c) => c.task_id === "big");
  assert.ok(card, "its card is in needs_review");
  const outline = await (await fetch(`${run.url}/review-board/runs/${run.runId}/tasks`)).json();
  const entry = (outline.tasks as OutlineTask[]).find((t) => t.task_id === "big")!;
  const html = renderToString(h(CardView, { face: cardFace(card, entry) }));
  assert.match(html, /TOO LARGE/);
  assert.match(html, /dump\.txt \(20000 bytes\)/);
  assert.match(html, /max_landed_file_mb/);

  const res = await fetch(
    `${run.url}/dashboard/review-board/runs/${run.runId}/tasks/big/review`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "merge", note: "the dump is meant to be there" }),
    },
  );
  assert.equal(res.status, 200, await res.clone().text());
  const done = await result;
  assert.equal(done.status, "completed", done.problems.join("; "));
  all = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const decided = all.findIndex((r) =>
    r.type === "task_review_decision" && r.data.task_id === "big" && r.data.decision === "merge"
  );
  const merged = all.findIndex((r) => r.type === "task_merged" && r.data.task_id === "big");
  assert.ok(decided > 0 && merged > decided, "it landed after the operator's merge decision");
  assert.equal((await sh(dir.path, "show", "main:dump.txt")).length, 20000, "it landed whole");
  assert.ok(await Deno.stat(join(dir.path, "dump.txt")).catch(() => undefined));
});
