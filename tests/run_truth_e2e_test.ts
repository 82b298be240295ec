/**
 * End to end, as a user meets it: runs that go wrong, checked through the journal, the
 * projection (agreed by the independent `scripts/fold.py`), the CLI and the board page in the
 * real browser. Real git, real agent processes, a real server.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import {
  browserPage,
  cli,
  columnsOf,
  openRunPage,
  pageColumn,
  planYaml,
  projectionAgreed,
  rowsOf,
  serveBoard,
  until,
  watchedRun,
  workspace,
} from "./_e2e.ts";

const quiet = { out: () => {}, port: 0, app: SERVER_APP };

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
  const first = await runPlan({
    root: dir.path,
    port: 0,
    out: (l) => lines.push(l),
    app: SERVER_APP,
  });
  assert.equal(first.status, "failed", lines.join("\n"));
  const terminal = lines.join("\n");
  assert.match(terminal, /f1.*the fixture server is down/);
  assert.match(terminal, /f2.*exit 3/);
  assert.match(terminal, /d.*waits on f1 \(FAILED\), f2 \(/);

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
  assert.match(String(waiting.data.reason), /f1 \(FAILED\), f2 \(FAILED\).*`service retry f1 f2`/);
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
  assert.match(
    status.out,
    /d is blocked: waits on f1 \(FAILED\), f2 \(FAILED\); `service retry f1 f2`/,
  );
  const doctor = await cli(dir.path, "doctor", "--json");
  const tasksCheck = JSON.parse(doctor.out).checks.find((c: { name: string }) =>
    c.name === "tasks"
  );
  assert.equal(tasksCheck.ok, false, "doctor does not say all is well after a failed run");
  assert.match(
    tasksCheck.detail,
    /FAILED: .*f1 \(.*the fixture server is down\).*blocked on them: d/,
  );
  assert.match(tasksCheck.fix, /`service retry f1 f2`.*`service cancel f1 f2`/);
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
    assert.match(await blocked.innerText(), /waits on f1 \(FAILED\), f2 \(FAILED\)/);
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

const LIB = "a\nb\nc\nd\ne\nf\ng\nh\n";

Deno.test("approval with overlapping owned_files and a conflict the rebase resolves: the overlap waits for the merge, the rebased diff is reviewed again, a second merge is refused", async () => {
  await using dir = await tempDir();
  const commit = (msg: string) => ["run", `git add -A && git commit -qm '${msg}'`];
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [
        {
          id: "a",
          owned: ["lib.txt"],
          script: [["write", "lib.txt", LIB.replace("b\n", "B\n")], ["report", "fixed b"]],
        },
        {
          id: "b",
          owned: ["lib.txt"],
          script: [["append", "lib.txt", "i\n"], ["report", "added i"]],
        },
        {
          // Touches lib.txt without declaring it: the same fix as a, then a better one.
          id: "c",
          script: [
            ["write", "lib.txt", LIB.replace("b\n", "B\n")],
            commit("fix b"),
            ["write", "lib.txt", LIB.replace("b\n", "B!\n")],
            commit("improve b"),
            ["report", "improved b"],
          ],
        },
      ],
    }],
    "max_agents: 3\nreview:\n  require_approval: true\n",
    { "lib.txt": LIB },
  );
  const run = watchedRun(dir.path);
  const rows = async () => run.runId ? await rowsOf(dir.path, run.runId) : [];
  const count = async (type: string, task: string) =>
    (await rows()).filter((r) => r.type === type && r.data.task_id === task).length;
  const review = async (task: string, decision: string) => {
    const res = await fetch(
      `${run.url}/dashboard/review-board/runs/${run.runId}/tasks/${task}/review`,
      {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ decision }),
      },
    );
    return { status: res.status, body: await res.json() };
  };

  await until(
    "a and c to wait for review",
    async () =>
      (await count("task_completed", "a")) === 1 && (await count("task_completed", "c")) === 1,
  );
  assert.equal(await count("task_claimed", "b"), 0, "b waits: a owns lib.txt and has not merged");
  const wait = (await rows()).find((r) => r.type === "task_waiting" && r.data.task_id === "b")!;
  assert.match(String(wait.data.reason), /lib\.txt.*\ba\b|\ba\b.*lib\.txt/);

  assert.equal((await review("a", "merge")).status, 200);
  await until("a to land", async () => (await count("task_merged", "a")) === 1);
  await until("b to start", async () => (await count("task_claimed", "b")) === 1);
  const all = await rows();
  assert.ok(
    all.findIndex((r) => r.type === "task_claimed" && r.data.task_id === "b") >
      all.findIndex((r) => r.type === "task_merged" && r.data.task_id === "a"),
    "b starts only after a merged",
  );

  // c's three-way merge conflicts with a; the rebase drops the duplicate commit and the diff
  // changed, so the card goes back to needs review instead of sitting under merged.
  assert.equal((await review("c", "merge")).status, 200);
  await until("c to be rebased", async () => (await count("task_rebased", "c")) === 1);
  await until("c to wait for review again", async () => (await count("task_completed", "c")) === 2);
  const rebased = (await rows()).find((r) => r.type === "task_rebased")!;
  assert.equal(rebased.data.diff_changed, true);
  assert.equal(await count("task_merged", "c"), 0);
  const mid = await projectionAgreed(dir.path, run.runId);
  assert.ok(columnsOf(mid).needs_review.includes("c"), JSON.stringify(columnsOf(mid)));

  {
    // The operator merges the rebased work from the page.
    await using browser = await browserPage();
    const page = browser.page;
    await openRunPage(page, run.url, run.runId, "c");
    assert.ok((await pageColumn(page, "needs_review")).includes("c"));
    assert.ok((await pageColumn(page, "merged")).includes("a"));
    await page.locator('button[data-decision="merge"]:not([disabled])').click();
    await page.locator(".receipt").waitFor();
  }
  await until("c to land", async () => (await count("task_merged", "c")) === 1);
  await until("b to wait for review", async () => (await count("task_completed", "b")) === 1);
  assert.equal((await review("b", "merge")).status, 200);
  const result = await run.result;
  assert.equal(result.status, "completed", run.lines.join("\n"));
  assert.equal(
    await Deno.readTextFile(join(dir.path, "lib.txt")),
    LIB.replace("b\n", "B!\n") + "i\n",
  );

  // A second merge of landed work is refused and writes nothing; the page offers no merge.
  await using server = await serveBoard(dir.path);
  const before = await Deno.readTextFile(join(dir.path, ".sdd/runs", run.runId, "journal.jsonl"));
  run.url = server.url;
  const again = await review("a", "merge");
  assert.equal(again.status, 409);
  assert.equal(again.body.error.code, "already_merged");
  assert.equal(
    await Deno.readTextFile(join(dir.path, ".sdd/runs", run.runId, "journal.jsonl")),
    before,
  );
  const final = await projectionAgreed(dir.path, run.runId);
  assert.deepEqual(columnsOf(final).merged.sort(), ["a", "b", "c"]);
  await using browser = await browserPage();
  await openRunPage(browser.page, server.url, run.runId, "a");
  await browser.page.locator("[data-actions-why]").waitFor();
  assert.equal(await browser.page.locator('button[data-decision="merge"]').isDisabled(), true);
  assert.match(
    await browser.page.locator("[data-task-state]").innerText(),
    /landed as [0-9a-f]{12}/,
  );
});

Deno.test("re-running a partly landed plan runs only what did not land; a changed goal is a new step; --force runs everything", async () => {
  await using dir = await tempDir();
  await using outside = await tempDir();
  const allow = join(outside.path, "api-key-set");
  const stages = (xText: string) => [{
    name: "s",
    steps: [
      { id: "x", script: [["append", "names.txt", xText], ["report"]] },
      {
        id: "y",
        script: [["if_missing", allow, [["fail", "no API key for the fixture"]]], [
          "write",
          "y.txt",
          "y\n",
        ], ["report"]],
      },
      { id: "z", script: [["append", "all.txt", "z\n"], ["report"]] },
    ],
  }];
  await workspace(dir.path, stages("x\n"));
  const first = await cli(dir.path, "run", "plan.yaml", "--port", "0");
  assert.equal(first.code, 1, first.out);
  assert.match(first.out, /y: FAILED: the agent reported failure: no API key for the fixture/);

  // Same plan again while y is FAILED: only y runs again (x and z landed), and the way out is
  // named in CLI words, not a loop.
  const again = await cli(dir.path, "run", "plan.yaml", "--port", "0");
  assert.equal(again.code, 1, again.out);
  assert.match(again.out, /2 already landed \(x in [0-9a-f]{10}, z in [0-9a-f]{10}\), 1 to do/);
  assert.match(again.out, /y: FAILED — no API key for the fixture \(`service retry y`\)/);
  assert.doesNotMatch(again.out, /POST \/tasks/);

  const cancel = await cli(dir.path, "cancel", "--all");
  assert.equal(cancel.code, 0, cancel.out);
  await Deno.writeTextFile(allow, "");
  const rerun = await cli(dir.path, "run", "plan.yaml", "--port", "0");
  assert.equal(rerun.code, 0, rerun.out);
  assert.match(rerun.out, /2 already landed \(x in [0-9a-f]{10}, z in [0-9a-f]{10}\), 1 to do/);
  assert.equal(await Deno.readTextFile(join(dir.path, "names.txt")), "x\n", "x did not run again");
  assert.equal(await Deno.readTextFile(join(dir.path, "all.txt")), "z\n");
  assert.equal(await Deno.readTextFile(join(dir.path, "y.txt")), "y\n");

  const runs = JSON.parse((await cli(dir.path, "runs", "--json")).out).runs;
  // The second run's only task (y) was cancelled after it ended: every task of it landed or was
  // cancelled, so it is completed now; the first run's y FAILED there and stays so.
  assert.deepEqual(runs.map((r: { status: string }) => r.status), [
    "completed",
    "completed",
    "failed",
  ]);
  const newest = runs[0].run_id;
  const started = (await rowsOf(dir.path, newest))[0];
  assert.deepEqual(
    (started.data.already_landed as { task_id: string }[]).map((l) => l.task_id),
    ["x", "z"],
  );
  assert.deepEqual(
    (started.data.planned as { task_id: string }[]).map((p) => p.task_id),
    ["y"],
  );
  const receipt = await projectionAgreed(dir.path, newest);
  assert.deepEqual(columnsOf(receipt).merged, ["y"]);
  for (const run of runs) await projectionAgreed(dir.path, run.run_id);
  {
    await using server = await serveBoard(dir.path);
    await using browser = await browserPage();
    await openRunPage(browser.page, server.url, newest);
    assert.equal(
      await browser.page.locator("[data-already-landed]").getAttribute("data-already-landed"),
      "2",
    );
  }

  // Everything landed: nothing to do. A changed goal is a new step and runs.
  const nothing = await cli(dir.path, "run", "plan.yaml", "--port", "0");
  assert.equal(nothing.code, 0, nothing.out);
  assert.match(nothing.out, /nothing to do: all 3 step\(s\) of plan.yaml already landed/);
  await Deno.writeTextFile(join(dir.path, "plan.yaml"), planYaml(stages("x2\n")));
  const changed = await cli(dir.path, "run", "plan.yaml", "--port", "0");
  assert.equal(changed.code, 0, changed.out);
  assert.match(changed.out, /2 already landed .*, 1 to do/);
  assert.equal(await Deno.readTextFile(join(dir.path, "names.txt")), "x\nx2\n");
  const forced = await cli(dir.path, "run", "plan.yaml", "--force", "--port", "0");
  assert.equal(forced.code, 0, forced.out);
  assert.match(forced.out, /3 to do/);
  assert.equal(await Deno.readTextFile(join(dir.path, "names.txt")), "x\nx2\nx2\n");
});
