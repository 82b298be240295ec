/**
 * End to end, as a user meets it: runs that go wrong, checked through the journal, the
 * projection (agreed by the independent `scripts/fold.py`), the CLI and the board page in the
 * real browser. Real git, real agent processes, a real server.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/orchestrator/run.ts";
import { tempDir } from "./helpers.ts";
import {
  browserPage,
  cli,
  columnsOf,
  openRunPage,
  pageColumn,
  projectionAgreed,
  rowsOf,
  serveBoard,
  workspace,
} from "./_e2e.ts";

const quiet = { out: () => {}, port: 0 };

Deno.test("a run whose agents fail (POST /fail, crash) says why everywhere; its dependent stays blocked; cancel and retry from the CLI, then `service run` finishes it", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const allow = join(outside.path, "fixture-server-up");
  await workspace(dir.path, [
    {
      name: "build",
      steps: [
        {
          id: "f1",
          script: [
            ["if_missing", allow, [["fail", "the fixture server is down"]]],
            ["write", "f1.txt", "f1\n"],
            ["report", "f1 built against the fixture server"],
          ],
        },
        { id: "f2", script: [["print", "error: segfault in the build"], ["exit", 3]] },
      ],
    },
    {
      name: "docs",
      depends: ["build"],
      steps: [{ id: "d", script: [["write", "d.txt", "d\n"], ["report"]] }],
    },
  ]);
  const lines: string[] = [];
  const first = await runPlan({ root: dir.path, port: 0, out: (l) => lines.push(l) });
  assert.equal(first.status, "failed", lines.join("\n"));
  const terminal = lines.join("\n");
  assert.match(terminal, /f1.*the fixture server is down/);
  assert.match(terminal, /f2.*exit 3/);
  assert.match(terminal, /d.*waits on f[12], which FAILED/);

  // The journal: every failed attempt is a task_verification_failed naming why, then a give-up.
  const rows = await rowsOf(dir.path, first.runId);
  const gated = (id: string) =>
    rows.filter((r) => r.type === "task_verification_failed" && r.data.task_id === id);
  assert.deepEqual(gated("f1")[0].data.signals, [
    { kind: "agent_reported_failure", detail: "the fixture server is down" },
  ]);
  const f2Signal = (gated("f2")[0].data.signals as { kind: string; detail: string }[])[0];
  // A crash within 2 s is the fast-exit probe's SpawnError (spec §7.3); later, agent_failed.
  assert.match(f2Signal.kind, /^(spawn_error|agent_failed)$/);
  assert.match(f2Signal.detail, /exit 3\b.*segfault in the build/);
  assert.equal(gated("f2").length, 3, "a crash is retried up to three attempts");
  assert.equal(gated("f1").length, 1, "an agent's own failure report is final: no blind retry");
  assert.ok(rows.some((r) => r.type === "task_failed" && r.data.task_id === "f1"));
  assert.ok(rows.some((r) => r.type === "task_failed" && r.data.task_id === "f2"));
  assert.ok(
    !rows.some((r) => r.type === "task_claimed" && r.data.task_id === "d"),
    "d never starts",
  );
  const waiting = rows.findLast((r) => r.type === "task_waiting" && r.data.task_id === "d")!;
  assert.match(String(waiting.data.reason), /which FAILED.*service retry/);
  assert.deepEqual(rows.at(-1)!.data.status, "failed");
  const logs = rows.filter((r) => r.type === "task_log_captured");
  assert.ok(logs.length >= 2, "each ended session's log is kept in the run directory");

  // The projection, as the independent fold computes it.
  const receipt = await projectionAgreed(dir.path, first.runId);
  assert.deepEqual(columnsOf(receipt).gated.sort(), ["f1", "f2"]);
  assert.deepEqual(columnsOf(receipt).running, []);

  // The CLI tells the same story and offers the way out.
  const status = await cli(dir.path, "status");
  assert.match(
    status.out,
    /run: run-\S+ \(failed: `service retry <task>` or `service cancel <task>`/,
  );
  assert.match(status.out, /f1 FAILED: .*the fixture server is down/);
  assert.match(status.out, /d is blocked: waits on f1, which FAILED; `service retry f1`/);
  const runs = await cli(dir.path, "runs", "--json");
  assert.equal(runs.code, 0, runs.out);
  assert.equal(JSON.parse(runs.out).runs[0].status, "failed");

  // The page: failed run, gated cards with reasons, the blocked dependent, attempts and logs.
  {
    await using server = await serveBoard(dir.path);
    await using browser = await browserPage();
    const page = browser.page;
    await openRunPage(page, server.url, first.runId, "f1");
    assert.deepEqual((await pageColumn(page, "gated")).sort(), ["f1", "f2"]);
    assert.match(await page.locator("select[name=run] option").first().innerText(), /failed/);
    assert.equal(await page.locator("[data-run-status]").innerText(), "failed");
    const blocked = page.locator('.outline [data-task-id="d"]');
    assert.equal(await blocked.getAttribute("data-state"), "blocked");
    assert.match(await blocked.innerText(), /which FAILED/);
    await page.locator("[data-attempt]").first().waitFor();
    assert.equal(await page.locator("[data-attempt]").count(), 1);
    assert.match(
      await page.locator("[data-attempt]").first().innerText(),
      /agent_reported_failure: the fixture server is down/,
    );
    assert.equal(await page.locator('[data-log-verified="true"]').count(), 1);
    assert.equal(await page.locator('button[data-decision="merge"]').isDisabled(), true);
  }

  // Cancel and retry from the CLI; then `service run` resumes the run and finishes it.
  const cancel = await cli(dir.path, "cancel", "f2", "--reason", "flaky build, dropped");
  assert.equal(cancel.code, 0, cancel.out);
  assert.match(cancel.out, /f2: CANCELLED \(was FAILED\)/);
  const retry = await cli(dir.path, "retry", "f1");
  assert.equal(retry.code, 0, retry.out);
  assert.match(retry.out, /f1: OPEN again \(was FAILED\)/);
  const again = await cli(dir.path, "retry", "f1");
  assert.equal(again.code, 1);
  assert.match(again.out, /f1: is OPEN; only FAILED, CANCELLED tasks can be retried/);
  await Deno.writeTextFile(allow, "");
  const second = await runPlan({ root: dir.path, ...quiet });
  assert.equal(second.status, "completed", second.problems.join("; "));
  assert.equal(second.runId, first.runId, "`service run` resumed the unfinished run");
  assert.equal(await Deno.readTextFile(join(dir.path, "f1.txt")), "f1\n");
  assert.equal(await Deno.readTextFile(join(dir.path, "d.txt")), "d\n");

  const after = await rowsOf(dir.path, first.runId);
  const cancelled = after.find((r) => r.type === "task_cancelled" && r.data.task_id === "f2")!;
  assert.match(String(cancelled.data.reason), /flaky build, dropped/);
  const retried = after.findLast((r) => r.type === "task_retried" && r.data.task_id === "f1")!;
  assert.match(String(retried.data.reason), /operator/);
  const final = await projectionAgreed(dir.path, first.runId);
  assert.deepEqual(columnsOf(final).merged.sort(), ["d", "f1"]);
  assert.deepEqual(columnsOf(final).gated, ["f2"]);
  assert.equal((final.board.run.completed as { status: string }).status, "completed");
});
