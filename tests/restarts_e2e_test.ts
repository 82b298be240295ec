/**
 * End to end, across restarts: real git, real agent processes (the scripted agent through the
 * generic adapter), the real task server and CLI. A stop is not a failure; interrupted work is
 * kept and continued, never landed as if finished; an operator's completion survives a restart;
 * `recovery.land_unreported` lands interrupted work only when every completion signal passes.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan, type RunResult } from "../lib/runner/run.ts";
import { readRunState } from "../lib/runs/run_state.ts";
import { taskDetail } from "../lib/review/activity.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import {
  browserPage,
  cliWith,
  columnsOf,
  openRunPage,
  pageColumn,
  planYaml,
  projectionAgreed,
  rowsOf,
  runEnv,
  serveBoard,
  sh,
  until,
  workspace,
} from "./_e2e.ts";

const quiet = { out: () => {}, port: 0, app: SERVER_APP };

const exists = (path: string) => Deno.stat(path).then(() => true, () => false);

/**
 * An agent step that appends a line to `progress.txt` (kept work carries the earlier lines),
 * signals `<mark>.<n>` for its n-th line, then waits for `<go>.<n>` before it reports. A
 * worktree that already holds progress must have been told so in the prompt.
 */
function resumableScript(mark: string, go: string): unknown[][] {
  return [
    ["if_exists", "progress.txt", [["require_prompt", "EARLIER WORK:"]]],
    [
      "run",
      `echo line >> progress.txt; n=$(wc -l < progress.txt); touch ${mark}.$n; ` +
      `while [ ! -f ${go}.$n ]; do sleep 0.1; done`,
    ],
    ["report", "progress written"],
  ];
}

/** A workspace with one task `long` running {@link resumableScript}; its flag files in `outside`. */
async function oneResumableTask(root: string, outside: string) {
  const mark = join(outside, "mark");
  const go = join(outside, "go");
  await workspace(root, [{
    name: "s",
    steps: [{ id: "long", script: resumableScript(mark, go) }],
  }]);
  return { mark, go };
}

/** Run in-process until `<mark>.<n>` appears, then stop as `service stop` does (SIGTERM → abort). */
async function runUntilThenStop(root: string, mark: string, n: number): Promise<RunResult> {
  const controller = new AbortController();
  const running = runPlan({ root, ...quiet, signal: controller.signal });
  await until(`the agent's line ${n}`, () => exists(`${mark}.${n}`));
  controller.abort();
  return await running;
}

Deno.test("service stop ×3 with the agent running consumes no attempt; each new attempt continues the kept work, none is landed, and the fourth finishes", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const { mark, go } = await oneResumableTask(dir.path, outside.path);
  let runId = "";
  for (let n = 1; n <= 3; n++) {
    const stopped = await runUntilThenStop(dir.path, mark, n);
    assert.equal(stopped.status, "stopped");
    runId = stopped.runId;
    assert.equal(await exists(join(dir.path, "progress.txt")), false, "nothing landed");
  }
  await Deno.writeTextFile(`${go}.4`, "");
  const lines: string[] = [];
  const last = await runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) });
  assert.equal(last.status, "completed", lines.join("\n"));
  assert.equal(last.runId, runId, "the same run resumed each time");
  assert.equal(
    await Deno.readTextFile(join(dir.path, "progress.txt")),
    "line\n".repeat(4),
    "every attempt's work, continued and landed together",
  );
  const terminal = lines.join("\n");
  assert.doesNotMatch(terminal, /attempt \d of 3; retrying/);
  assert.match(terminal, /a new attempt continues from its kept work \(no attempt counted\)/);

  const rows = await rowsOf(dir.path, runId);
  const claims = rows.filter((r) => r.type === "task_claimed");
  // Each agent run is one attempt, numbered alike in the terminal, the journal and the board; what
  // a stop does not spend is the retry budget, which counts failed attempts only.
  assert.deepEqual(claims.map((r) => r.data.attempt), [1, 2, 3, 4], "one number per agent run");
  // Each process that drove the run numbered its sessions on from the journal's: 001 is one session.
  assert.deepEqual(
    claims.map((r) => /^s-\w{4}-(\d{3})-/.exec(String(r.data.session_id))?.[1]),
    ["001", "002", "003", "004"],
    "session numbers go on across the resumptions",
  );
  assert.doesNotMatch(terminal, /failed attempt/, "no stop spent an attempt of the budget");
  assert.ok(!rows.some((r) => r.type === "task_failed"));
  const completed = rows.filter((r) => r.type === "task_completed");
  assert.equal(completed.length, 1, "only the attempt that finished completed the task");
  assert.equal(completed[0].data.recovered, undefined, "it was reported, not recovered");
  assert.ok(
    rows.findIndex((r) => r.type === "task_completed") >
      rows.findLastIndex((r) => r.type === "task_claimed"),
    "the completion came from the last attempt",
  );
  assert.equal(rows.filter((r) => r.type === "task_merged").length, 1);
  assert.equal(
    (await sh(dir.path, "for-each-ref", "refs/service/rescue/")).trim(),
    "",
    "no rescued work is left to report once its continuation landed",
  );
});

Deno.test("an operator's completion of waiting tasks survives a stop and a restart: DONE for good, never run or merged, dependents go on, shown on the board, not run again by a new run of the plan", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const mark = join(outside.path, "mark");
  const go = join(outside.path, "go");
  const stages = (after: string) => [
    {
      name: "one",
      steps: [
        { id: "busy", script: resumableScript(mark, go) },
        { id: "w1", script: [["write", "w1.txt", "agent\n"], ["report"]] },
        { id: "w2", script: [["write", "w2.txt", "agent\n"], ["report"]] },
      ],
    },
    {
      name: "two",
      depends: ["one"],
      steps: [{ id: "after", script: [["append", "after.txt", after], ["report"]] }],
    },
  ];
  await workspace(dir.path, stages("ok\n"), "max_agents: 1\n");
  const controller = new AbortController();
  const running = runPlan({ root: dir.path, ...quiet, signal: controller.signal });
  await until("busy's agent", () => exists(`${mark}.1`));
  const url = (await readRunState(workspacePaths(dir.path)))!.url;
  for (const id of ["w1", "w2"]) {
    const res = await fetch(`${url}/tasks/${id}/complete`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ operator: true, summary: "done by hand" }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.operator_done, true);
  }
  controller.abort();
  const stopped = await running;
  assert.equal(stopped.status, "stopped");

  await Deno.writeTextFile(`${go}.2`, "");
  const lines: string[] = [];
  const resumed = await runPlan({ root: dir.path, ...quiet, out: (l) => lines.push(l) });
  const terminal = lines.join("\n");
  assert.equal(resumed.status, "completed", terminal);
  assert.deepEqual(resumed.problems.sort(), [
    "w1: DONE by an operator (nothing merged)",
    "w2: DONE by an operator (nothing merged)",
  ]);
  assert.doesNotMatch(terminal, /worktree is gone/);
  assert.equal(await exists(join(dir.path, "w1.txt")), false, "no agent ran w1");
  assert.equal(await Deno.readTextFile(join(dir.path, "after.txt")), "ok\n");

  const rows = await rowsOf(dir.path, resumed.runId);
  for (const id of ["w1", "w2"]) {
    const about = rows.filter((r) => r.data.task_id === id).map((r) => r.type);
    assert.deepEqual(about, ["task_verification_failed", "task_done_by_operator"], id);
  }
  const receipt = await projectionAgreed(dir.path, resumed.runId);
  assert.deepEqual(columnsOf(receipt).gated.sort(), ["w1", "w2"]);
  assert.deepEqual(columnsOf(receipt).merged.sort(), ["after", "busy"]);
  const w1 = receipt.board.columns.gated.find((c: { task_id: string }) => c.task_id === "w1")!;
  assert.deepEqual(w1.gates, [{
    kind: "operator_done",
    detail: "marked done by an operator: done by hand; nothing was merged",
  }]);
  const task = JSON.parse(
    await Deno.readTextFile(join(dir.path, ".sdd/runtime/task-backlog.json")),
  ).tasks.find((t: { id: string }) => t.id === "w1");
  assert.equal(task.status, "DONE");

  await using server = await serveBoard(dir.path);
  await using browser = await browserPage();
  await openRunPage(browser.page, server.url, resumed.runId, "w1");
  assert.deepEqual((await pageColumn(browser.page, "gated")).sort(), ["w1", "w2"]);
  const state = browser.page.locator("[data-task-state]");
  await state.waitFor();
  assert.equal(await state.getAttribute("data-task-state"), "done");
  assert.match(await state.innerText(), /DONE by an operator/);
  assert.equal(
    await browser.page.locator('button[data-decision="merge"]').isDisabled(),
    true,
    "nothing to merge",
  );

  // A new run of the same plan: the operator's completions are done for good, like landings.
  const again: string[] = [];
  const rerun = await runPlan({ root: dir.path, ...quiet, out: (l) => again.push(l) });
  assert.equal(rerun.upToDate, true, again.join("\n"));
  assert.match(
    again.join("\n"),
    new RegExp(
      "nothing to do: all 4 step\\(s\\) of plan.yaml are done: 2 already landed \\(busy in " +
        "[0-9a-f]{10}, after in [0-9a-f]{10}\\), 2 marked done by an operator \\(w1 in " +
        `${resumed.runId}, w2 in ${resumed.runId}; nothing was merged\\)`,
    ),
  );
  // A changed step runs; the operator's steps do not, and run_started says why.
  await Deno.writeTextFile(join(dir.path, "plan.yaml"), planYaml(stages("again\n")));
  const changed: string[] = [];
  const next = await runPlan({ root: dir.path, ...quiet, out: (l) => changed.push(l) });
  assert.equal(next.status, "completed", changed.join("\n"));
  assert.match(
    changed.join("\n"),
    /1 already landed \(busy in [0-9a-f]{10}\), 2 marked done by an operator \(w1 in run-\S+, w2 in run-\S+; nothing was merged\), 1 to do from plan.yaml/,
  );
  assert.equal(await exists(join(dir.path, "w1.txt")), false, "no agent ever ran w1");
  assert.equal(await Deno.readTextFile(join(dir.path, "after.txt")), "ok\nagain\n");
  const started = (await rowsOf(dir.path, next.runId))[0];
  assert.deepEqual(started.data.done_by_operator, [
    { task_id: "w1", run_id: resumed.runId },
    { task_id: "w2", run_id: resumed.runId },
  ]);
  assert.deepEqual(
    (started.data.planned as { task_id: string; depends_on: string[] }[]).map((p) => [
      p.task_id,
      p.depends_on,
    ]),
    [["after", []]],
  );
});

Deno.test("recovery.land_unreported lands interrupted work only when every completion signal passes, marked 'landed without a report'; an exit 0 without a report stays a completion candidate", async () => {
  await using dir = await tempDir();
  const env = runEnv({ SERVICE_AGENT_TIMEOUT_S: "3", SERVICE_KILL_GRACE_S: "1" });
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [
        // Times out with its signal passing: landed without a report.
        {
          id: "good",
          script: [["write", "good.txt", "good\n"], ["sleep", 60_000]],
          signals: [{ path_exists: "good.txt" }],
        },
        // Times out with its signal failing: kept; the next attempt continues it and reports.
        {
          id: "bad",
          script: [
            ["if_exists", "bad.txt", [["write", "done.txt", "done\n"], ["report"], ["exit", 0]]],
            ["write", "bad.txt", "half\n"],
            ["sleep", 60_000],
          ],
          signals: [{ path_exists: "done.txt" }],
        },
        // Exits 0 on its own without reporting: a completion candidate, as before.
        { id: "quiet", script: [["write", "quiet.txt", "q\n"]] },
      ],
    }],
    "recovery:\n  land_unreported: true\n",
  );
  const lines: string[] = [];
  const result = await runPlan({ root: dir.path, ...quiet, env, out: (l) => lines.push(l) });
  const terminal = lines.join("\n");
  assert.equal(result.status, "completed", terminal);
  assert.match(terminal, /good: merged as \w+ \(landed without a report\)/);
  assert.match(terminal, /quiet: exited without a report/);
  assert.match(terminal, /quiet: merged as \w+ \(it exited without a report\)/);
  assert.equal(await Deno.readTextFile(join(dir.path, "bad.txt")), "half\n");
  assert.equal(await Deno.readTextFile(join(dir.path, "done.txt")), "done\n");

  const rows = await rowsOf(dir.path, result.runId);
  const completion = (id: string) =>
    rows.filter((r) => r.type === "task_completed" && r.data.task_id === id).map((r) => r.data);
  assert.deepEqual(completion("good"), [{ task_id: "good", recovered: true, interrupted: true }]);
  assert.deepEqual(completion("quiet"), [{ task_id: "quiet", recovered: true }]);
  assert.equal(completion("bad").length, 1);
  assert.equal(completion("bad")[0].recovered, undefined, "bad landed only once reported");
  const badClaims = rows.filter((r) => r.type === "task_claimed" && r.data.task_id === "bad");
  assert.equal(badClaims.length, 2);

  const paths = workspacePaths(dir.path);
  const good = await taskDetail(paths, result.runId, "good");
  assert.equal(good.task.attempts.at(-1)!.unreported, "interrupted");
  assert.equal(
    (await taskDetail(paths, result.runId, "quiet")).task.attempts[0].unreported,
    "exited",
  );

  await using server = await serveBoard(dir.path);
  await using browser = await browserPage();
  await openRunPage(browser.page, server.url, result.runId, "good");
  await browser.page.locator("[data-landed-without-report]").waitFor();
  assert.match(
    await browser.page.locator('[data-unreported="interrupted"]').innerText(),
    /landed without a report/,
  );
  await openRunPage(browser.page, server.url, result.runId, "quiet");
  assert.match(
    await browser.page.locator('[data-unreported="exited"]').innerText(),
    /exited without a report/,
  );
});

Deno.test("service run --detach resumes a stopped run and says it resumed; the foreground run prints its final status line once", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const { mark, go } = await oneResumableTask(dir.path, outside.path);
  const grace = { SERVICE_KILL_GRACE_S: "1" };
  const started = await cliWith(grace, dir.path, "run", "--detach", "--port", "0");
  assert.equal(started.code, 0, started.out);
  assert.match(started.out, /run \S+ started in the background/);
  await until("the first agent", () => exists(`${mark}.1`));
  const stop = await cliWith(grace, dir.path, "stop");
  assert.equal(stop.code, 0, stop.out);
  const resumed = await cliWith(grace, dir.path, "run", "--detach", "--port", "0");
  assert.equal(resumed.code, 0, resumed.out);
  assert.match(resumed.out, /run \S+ resumed in the background/);
  await until("the resumed agent", () => exists(`${mark}.2`));
  assert.equal((await cliWith(grace, dir.path, "stop")).code, 0);

  await Deno.writeTextFile(`${go}.3`, "");
  const last = await cliWith(grace, dir.path, "run", "--port", "0");
  assert.equal(last.code, 0, last.out);
  assert.equal(last.out.match(/completed: every task landed/g)?.length, 1, last.out);
  const summaries = last.out.split("\n").filter((l) => /^run \S+ · \d+s · /.test(l));
  assert.equal(new Set(summaries).size, summaries.length, `a summary repeated:\n${last.out}`);
  const log = await Deno.readTextFile(join(dir.path, ".sdd/runtime/orchestrator.log"));
  const stoppedLines = log.split("\n").filter((l) => /^run \S+ stopped/.test(l));
  assert.equal(stoppedLines.length, 2, `one final line per stopped run:\n${log}`);
});
