/**
 * End to end: real git repositories, the real task server, real agent processes (the scripted
 * agent, through the generic adapter), every failure mode of spec §7.3 the orchestrator owns.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { sha256Hex } from "../lib/journal/hash.ts";
import {
  browserPage,
  CLI,
  columnsOf,
  journalOf,
  openRunPage,
  projectionAgreed,
  runEnv,
  serveBoard,
  sh,
  workspace,
} from "./_e2e.ts";
import { tempDir } from "./helpers.ts";

const quiet = { out: () => {}, port: 0, app: SERVER_APP };

Deno.test("run: a dependent stage starts from the merged work of the stage before it", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [
    {
      name: "one",
      steps: [{
        id: "base",
        script: [["write", "lib.txt", "v1\n"], ["report"]],
        signals: [{ path_exists: "lib.txt" }],
      }],
    },
    {
      name: "two",
      depends: ["one"],
      steps: [{
        id: "uses",
        script: [["run", "grep -q v1 lib.txt"], ["write", "use.txt", "ok\n"], ["report"]],
      }],
    },
  ]);
  const result = await runPlan({ root: dir.path, ...quiet });
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await Deno.readTextFile(join(dir.path, "use.txt")), "ok\n");
  const journal = await journalOf(dir.path, result.runId);
  assert.equal(journal.verified, true);
  assert.equal(
    (journal.rows[0].row.data as { config_sha256?: string }).config_sha256,
    `sha256:${sha256Hex(await Deno.readFile(join(dir.path, "service.yaml")))}`,
    "run_started records the digest of the service.yaml the run validated",
  );
  const types = journal.rows.map((r) => r.row.type);
  assert.ok(
    types.indexOf("task_merged") < types.lastIndexOf("task_claimed"),
    "the dependent was claimed after the merge",
  );
  assert.equal(
    (await sh(dir.path, "status", "--porcelain")).trim(),
    "",
    "the user's checkout is clean",
  );
});

Deno.test("run: an agent that crashes is retried; the next attempt lands", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "flaky",
      script: [["first_attempt", [["print", "segfault (simulated)"], ["exit", 3]]], [
        "write",
        "f.txt",
        "x\n",
      ], ["report"]],
    }],
  }]);
  const result = await runPlan({ root: dir.path, ...quiet });
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
  const exited = rows.filter((r) => r.type === "agent_exited").map((r) => r.data.exit_code);
  assert.deepEqual(exited, [3, 0]);
  assert.ok(rows.some((r) => r.type === "task_retried"));
});

Deno.test("run: an agent that exits without reporting leaves an orphan whose partial work is recovered and merged", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [{ id: "quiet", script: [["write", "partial.txt", "half\n"]] }],
  }]);
  const result = await runPlan({ root: dir.path, ...quiet });
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await Deno.readTextFile(join(dir.path, "partial.txt")), "half\n");
  const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
  assert.ok(rows.some((r) => r.type === "task_completed" && r.data.recovered === true));
  assert.ok(rows.some((r) => r.type === "task_merged"));
  const ledger = await Deno.readTextFile(join(dir.path, ".sdd/metrics/verification_nudges.jsonl"));
  assert.match(ledger, /"task_id":"quiet"/);
});

Deno.test("run: an agent hanging past its timeout gets SIGTERM then SIGKILL (whole tree); exit 124, its work is kept and the next attempt continues it", async () => {
  await using dir = await tempDir();
  const env = runEnv({ SERVICE_AGENT_TIMEOUT_S: "2", SERVICE_KILL_GRACE_S: "1" });
  const marker = `hang-marker-${crypto.randomUUID().slice(0, 8)}`;
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "stuck",
      script: [
        ["if_missing", "wip.txt", [["write", "wip.txt", `${marker}\n`], ["hang"]]],
        ["require_prompt", "EARLIER WORK:"],
        ["report", "finished the kept work"],
      ],
    }],
  }]);
  const started = Date.now();
  const result = await runPlan({ root: dir.path, ...quiet, env });
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.ok(Date.now() - started < 30_000);
  const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
  const exit = rows.find((r) => r.type === "agent_exited")!;
  assert.equal(exit.data.exit_code, 124);
  assert.equal(exit.data.ended_by, "timeout");
  const completed = rows.filter((r) => r.type === "task_completed");
  assert.deepEqual(completed.map((r) => r.data.summary), ["finished the kept work"]);
  assert.ok(
    rows.indexOf(completed[0]) > rows.findLastIndex((r) => r.type === "task_claimed"),
    "the timed-out work was not landed as if finished: the next attempt completed it",
  );
  assert.equal(
    await Deno.readTextFile(join(dir.path, "wip.txt")),
    `${marker}\n`,
    "the kept work landed with the attempt that finished it",
  );
  const left = await new Deno.Command("pgrep", {
    args: ["-f", `sleep 3600; : ${exit.data.session_id}`],
  }).output();
  const pids = new TextDecoder().decode(left.stdout).trim();
  assert.equal(pids, "", `processes of the agent's tree survived: ${pids}`);
});

Deno.test("run: two agents editing the same file — the second conflicts, a rebase cannot help, and a new attempt from the new tip is told about the other change", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [
      { id: "left", script: [["write", "shared.txt", "left\n"], ["report"]] },
      {
        id: "right",
        script: [
          // Its first attempt reports once left has landed (left's file is in the checkout), so
          // it is the one that conflicts whatever the load (a fixed sleep let it land first).
          ["first_attempt", [
            ["write", "shared.txt", "right\n"],
            [
              "run",
              `for i in $(seq 600); do [ -f '${dir.path}/shared.txt' ] && break; sleep 0.05; done`,
            ],
            ["report"],
          ]],
          ["retry", [
            ["require_prompt", "conflicted in shared.txt"],
            ["require_prompt", "+left"],
            ["append", "shared.txt", "right\n"],
            ["report"],
          ]],
        ],
      },
    ],
  }]);
  const result = await runPlan({ root: dir.path, ...quiet });
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await Deno.readTextFile(join(dir.path, "shared.txt")), "left\nright\n");
  assert.equal((await sh(dir.path, "status", "--porcelain")).trim(), "");
  const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
  const failed = rows.find((r) => r.type === "task_verification_failed")!;
  assert.deepEqual(failed.data, {
    task_id: "right",
    signals: [{ kind: "merge_conflict", detail: "shared.txt" }],
  });
  const order = rows.map((r) => r.type).filter((t) =>
    ["task_verification_failed", "task_retried", "task_claimed", "task_merged"].includes(t)
  );
  assert.equal(rows.filter((r) => r.type === "merge_conflict").length, 1);
  assert.equal(order.filter((t) => t === "task_claimed").length, 3);
  assert.equal(order.at(-1), "task_merged");
  // The projection (agreed by fold.py) and the page tell the same story.
  const receipt = await projectionAgreed(dir.path, result.runId);
  assert.deepEqual(columnsOf(receipt).merged.sort(), ["left", "right"]);
  await using server = await serveBoard(dir.path);
  await using browser = await browserPage();
  await openRunPage(browser.page, server.url, result.runId, "right");
  const attempts = browser.page.locator("[data-attempt]");
  await attempts.first().waitFor();
  assert.equal(await attempts.count(), 2);
  assert.equal(await attempts.nth(1).getAttribute("data-outcome"), "gated");
  assert.match(await attempts.nth(1).innerText(), /merge_conflict: shared\.txt/);
  assert.equal(await attempts.nth(0).getAttribute("data-outcome"), "merged");
});

Deno.test("run: a rate-limit line blocks spawns for the cooldown, is not a task failure, and the task resumes", async () => {
  await using dir = await tempDir();
  const env = runEnv({ SERVICE_RATE_LIMIT_COOLDOWN_S: "2" });
  const flag = join(dir.path, "..", `${crypto.randomUUID()}.flag`);
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "busy",
      script: [
        [
          "run",
          `test -f ${flag} || { touch ${flag}; echo 'Error: HTTP 429 Too Many Requests: rate limit exceeded'; exit 1; }`,
        ],
        ["write", "done.txt", "ok\n"],
        ["report"],
      ],
    }],
  }]);
  try {
    const result = await runPlan({ root: dir.path, ...quiet, env });
    assert.equal(result.status, "completed", result.problems.join("; "));
    const rows = (await journalOf(dir.path, result.runId)).rows;
    const limited = rows.find((r) => r.row.type === "rate_limited")!;
    assert.match(String(limited.row.data.line), /429/);
    const claims = rows.filter((r) => r.row.type === "task_claimed");
    assert.equal(claims.length, 2);
    const gap = Date.parse(claims[1].row.ts) - Date.parse(limited.row.ts);
    assert.ok(gap >= 1500, `respawned ${gap} ms after the rate limit`);
    const store = JSON.parse(
      await Deno.readTextFile(join(dir.path, ".sdd/runtime/task-backlog.json")),
    );
    const task = store.tasks.find((t: { id: string }) => t.id === "busy");
    assert.equal(task.attempts, 1, "the rate-limited attempt does not count");
  } finally {
    await Deno.remove(flag).catch(() => {});
  }
});

Deno.test("run: reaching budget_usd mid-run stops scheduling before the cap and says so", async () => {
  await using dir = await tempDir();
  const result_line = JSON.stringify({
    type: "result",
    subtype: "success",
    total_cost_usd: 0.0015,
    modelUsage: { "claude-haiku-4-5": { inputTokens: 1000, outputTokens: 100, costUSD: 0.0015 } },
  });
  const step = (id: string) => ({
    id,
    script: [["write", `${id}.txt`, "x\n"], ["print", result_line], ["report"]],
  });
  await workspace(
    dir.path,
    [{ name: "s", steps: [step("a"), step("b"), step("c")] }],
    "max_agents: 1\nbudget_usd: 0.002\n",
  );
  const lines: string[] = [];
  const result = await runPlan({
    root: dir.path,
    port: 0,
    out: (l) => lines.push(l),
    app: SERVER_APP,
  });
  assert.equal(result.status, "failed");
  assert.equal(result.counts.CLOSED, 1);
  assert.equal(result.counts.OPEN, 2);
  assert.match(lines.join("\n"), /Budget exceeded, read-only mode/);
  // "use batch routing" (spec §7.3) says how: the generic adapter's tasks cannot be batched.
  assert.match(
    lines.join("\n"),
    /or batch routing \(batch_eligible: true, with the claude or codex adapter, whose providers' batch APIs cost half\)\./,
  );
  const cost = JSON.parse(await Deno.readTextFile(join(dir.path, ".sdd/runtime/cost_report.json")));
  assert.equal(cost.total_micro_usd, 1500);
  assert.equal(cost.budget_micro_usd, 2000);
  const rows = (await journalOf(dir.path, result.runId)).rows.map((r) => r.row);
  assert.ok(rows.some((r) => r.type === "budget_exceeded"));
});

Deno.test("run: kill -9 of the orchestrator mid-run, then `run` again recovers without losing a journal row or a commit", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [
      { id: "fast", script: [["write", "fast.txt", "1\n"], ["report"]], owned: ["fast.txt"] },
      {
        id: "slow",
        // The next attempt continues the kept work and reports.
        script: [["if_missing", "slow.txt", [["write", "slow.txt", "partial\n"], [
          "sleep",
          60_000,
        ]]], ["report"]],
        owned: ["slow.txt"],
      },
    ],
  }]);
  const env = { NO_COLOR: "1", RUST_BACKTRACE: "0" };
  const first = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"],
    env,
    stdout: "null",
    stderr: "null",
  }).spawn();
  const runsDir = join(dir.path, ".sdd/runs");
  let journalFile = "";
  const deadline = Date.now() + 30_000;
  for (;;) {
    assert.ok(Date.now() < deadline, "the first run did not reach the point to kill");
    await new Promise((r) => setTimeout(r, 100));
    try {
      for await (const e of Deno.readDir(runsDir)) {
        journalFile = join(runsDir, e.name, "journal.jsonl");
      }
      const text = await Deno.readTextFile(journalFile);
      if (text.includes('"task_merged"') && (text.match(/"task_claimed"/g) ?? []).length >= 2) {
        break;
      }
    } catch { /* not yet */ }
  }
  await new Promise((r) => setTimeout(r, 300)); // let the slow agent write its file
  first.kill("SIGKILL");
  await first.status;
  const before = await Deno.readTextFile(journalFile);
  const fastCommit = (await sh(dir.path, "rev-parse", "HEAD")).trim();

  const second = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(second.stdout) + new TextDecoder().decode(second.stderr);
  assert.equal(second.code, 0, out);
  assert.match(out, /resuming run/);
  const after = await Deno.readTextFile(journalFile);
  assert.ok(after.startsWith(before), "every row of the killed run is still there, unchanged");
  const journal = verifyJournalText(after);
  assert.equal(journal.verified, true);
  const types = journal.rows.map((r) => r.row.type);
  assert.equal(types.filter((t) => t === "run_started").length, 1);
  assert.ok(types.includes("run_resumed"));
  assert.equal(await Deno.readTextFile(join(dir.path, "slow.txt")), "partial\n");
  const log = await sh(dir.path, "log", "--format=%H");
  assert.ok(log.includes(fastCommit), "the commit merged before the kill is still on the branch");
  const pids = join(dir.path, ".sdd/runtime/pids");
  const stale = [...Deno.readDirSync(pids)];
  assert.deepEqual(stale, [], "no stale PID files");
});

Deno.test("GET /status reports an active rate-limit cooldown", async () => {
  await using dir = await tempDir();
  const runtime = join(dir.path, ".sdd/runtime");
  await Deno.mkdir(runtime, { recursive: true });
  const until = Date.now() / 1000 + 120;
  await Deno.writeTextFile(
    join(runtime, "rate_limits.json"),
    JSON.stringify({
      version: 1,
      cooldowns: { claude: { until, since: until - 300, rule: "token:429" } },
    }),
  );
  const { createApp } = await import("../routes/_app.ts");
  const { appContext } = await import("../lib/server/serve.ts");

  const { closeTaskStore } = await import("../lib/tasks/registry.ts");
  const ctx = appContext(dir.path, []);
  try {
    const status = await (await createApp(ctx).request("/status")).json();
    assert.equal(status.rate_limits.cooldowns[0].adapter, "claude");
    assert.ok(status.rate_limits.cooldowns[0].remaining_s > 100);
  } finally {
    await closeTaskStore(ctx);
  }
});

Deno.test("run with review.require_approval: work waits for the board; request_changes retries with the note; merge lands it", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [{
        id: "feature",
        script: [
          ["first_attempt", [["write", "feature.txt", "draft\n"], ["report"]]],
          ["retry", [["require_prompt", "call it final"], ["write", "feature.txt", "final\n"], [
            "report",
          ]]],
        ],
      }],
    }],
    "review:\n  require_approval: true\n",
  );
  let url = "";
  let runId = "";
  const running = runPlan({
    root: dir.path,
    port: 0,
    app: SERVER_APP,
    out: (line) => {
      const m =
        /review board \(live while the run lasts\): (http:\/\/[^/]+)\/dashboard\/review-board\?run=(\S+)/
          .exec(line);
      if (m) [url, runId] = [m[1], m[2]];
    },
  });
  const journalFile = () => join(dir.path, ".sdd/runs", runId, "journal.jsonl");
  async function waitFor(type: string, count: number) {
    for (let i = 0; i < 200; i++) {
      if (runId) {
        const text = await Deno.readTextFile(journalFile()).catch(() => "");
        if ((text.match(new RegExp(`"type":"${type}"`, "g")) ?? []).length >= count) return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no ${count}× ${type} in the journal`);
  }
  async function review(decision: string, note?: string) {
    const res = await fetch(`${url}/dashboard/review-board/runs/${runId}/tasks/feature/review`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(note ? { decision, note } : { decision }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    await res.body?.cancel();
  }
  await waitFor("task_completed", 1);
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(
    !(await Deno.readTextFile(journalFile())).includes('"task_merged"'),
    "nothing merges before approval",
  );
  await review("request_changes", "call it final");
  await waitFor("task_completed", 2);
  await review("merge");
  const result = await running;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await Deno.readTextFile(join(dir.path, "feature.txt")), "final\n");
  const rows = (await journalOf(dir.path, runId)).rows.map((r) => r.row);
  const retried = rows.find((r) => r.type === "task_retried")!;
  assert.match(String(retried.data.reason), /requested changes: call it final/);
  assert.equal(rows.filter((r) => r.type === "task_claimed").length, 2);
  const merged = rows.findLastIndex((r) => r.type === "task_merged");
  const decided = rows.findLastIndex((r) =>
    r.type === "task_review_decision" && r.data.decision === "merge"
  );
  assert.ok(merged > decided && decided > 0, "the merge lands after the operator's decision");
  assert.equal(rows.at(-1)!.type, "run_completed");
});

Deno.test("run: a merge that would touch the user's uncommitted change waits, `status` says why, and lands once it can", async () => {
  await using dir = await tempDir();
  await workspace(dir.path, [{
    name: "s",
    steps: [{
      id: "readme",
      script: [["write", "README.md", "# e2e\n\nby an agent\n"], ["report"]],
    }],
  }]);
  await Deno.writeTextFile(join(dir.path, "README.md"), "# e2e\n\nmy unsaved notes\n");
  const running = runPlan({ root: dir.path, ...quiet });
  const { collectStatus } = await import("../lib/status/status.ts");
  const { formatStatus } = await import("../lib/status/format.ts");
  const { appContext } = await import("../lib/server/serve.ts");

  let lines: string[] = [];
  for (let i = 0; i < 200; i++) {
    const status = await collectStatus(appContext(dir.path, [])) as Record<string, unknown>;
    const plain = (text: string) => text;
    lines = formatStatus(status, "test", { bold: plain, red: plain, yellow: plain, green: plain });
    // "merging" may show first while the merge is on its way; the wait names the file.
    if (lines.some((l) => l.includes("readme waits") && l.includes("README.md"))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.match(lines.join("\n"), /readme waits: .*README\.md/);
  assert.equal(
    await Deno.readTextFile(join(dir.path, "README.md")),
    "# e2e\n\nmy unsaved notes\n",
    "untouched",
  );
  await sh(dir.path, "checkout", "--", "README.md"); // the user sets their edit aside
  const result = await running;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await Deno.readTextFile(join(dir.path, "README.md")), "# e2e\n\nby an agent\n");
});
