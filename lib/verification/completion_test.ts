/**
 * The verification step's record, on a real task store and journal: written once per completion
 * even when a resumed process lands work an earlier process verified; the log's test run and the
 * agent's own claim kept apart.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appendEvents } from "../journal/journal_file.ts";
import * as ev from "../journal/events.ts";
import { TaskStore } from "../tasks/store.ts";
import { journalPath, workspacePaths } from "../workspace.ts";
import { VerificationStep } from "./completion.ts";
import { ledgerPath } from "./ledger.ts";
import { taskInput } from "./_test_fixtures.ts";
import { completionVerdict } from "./verdict.ts";

async function setup() {
  const root = await Deno.makeTempDir({ prefix: "verify-step-" });
  const paths = workspacePaths(root);
  const store = await TaskStore.open(paths);
  await store.create([taskInput("t1")], { runId: "r1" });
  await store.claim("t1", "s1");
  await store.complete("t1", { tests_run: true, summary: "done" }, completionVerdict(paths));
  const journal = journalPath(paths, "r1");
  await Deno.mkdir(join(paths.runs, "r1"), { recursive: true });
  await appendEvents(journal, [ev.runStarted({ run_id: "r1" })]);
  const alerts: string[] = [];
  const step = () =>
    new VerificationStep({
      paths,
      runId: "r1",
      journalPath: journal,
      targetBranch: "main",
      store,
      qualityGates: () => [],
      signals: () => [],
      evaluateBeforeMerge: true,
      nudge: { threshold: 0.3, min_completions: 1 },
      onAlert: (n) => alerts.push(`${n.unverified_count}/${n.total_completions}`),
      warn: () => {},
    });
  return {
    root,
    paths,
    store,
    journal,
    alerts,
    step,
    ledger: async () =>
      (await Deno.readTextFile(ledgerPath(paths)).catch(() => "")).trim().split("\n")
        .filter(Boolean).map((l) => JSON.parse(l)),
    async [Symbol.asyncDispose]() {
      await store.close();
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("VerificationStep: one record per completion, even across processes; the agent's claim is only a hint", async () => {
  await using s = await setup();
  const log = join(s.paths.runtime, "s1.log");
  await Deno.mkdir(s.paths.runtime, { recursive: true });
  await Deno.writeTextFile(log, "working…\nall tests passed, trust me\n");
  const handle = { sessionId: "s1", branch: "agent/s1", logPath: log };
  // No gates and no producers: nothing to run on a merged tree, so no git is needed.
  assert.deepEqual(await s.step().verify("t1", handle), { gatesFailed: false });
  let records = await s.ledger();
  assert.equal(records.length, 1);
  assert.equal(records[0].tests_run, false, "prose is not a test run");
  assert.equal(records[0].verified, false);
  assert.equal(s.store.get("t1")!.flagged_unverified, true);
  assert.deepEqual(s.alerts, ["1/1"], "the alert trips once");
  const row = (await Deno.readTextFile(s.journal)).trim().split("\n").map((l) => JSON.parse(l))
    .find((r) => r.type === "task_verification_recorded");
  assert.deepEqual(row.data.reported, {
    tests_run: true,
    quality_gates_run: false,
    completion_signals_checked: false,
  });

  // A resumed process (a new step) lands the same completion: no second record, no second alert.
  await s.step().verify("t1", handle);
  records = await s.ledger();
  assert.equal(records.length, 1);
  assert.deepEqual(s.alerts, ["1/1"]);

  // A new completion (another session) with a real test run in its log gets its own record.
  const log2 = join(s.paths.runtime, "s2.log");
  await Deno.writeTextFile(log2, "$ deno test\nok | 4 passed | 0 failed (20ms)\n");
  await s.step().verify("t1", { sessionId: "s2", branch: "agent/s2", logPath: log2 });
  records = await s.ledger();
  assert.deepEqual(records.map((r) => [r.session_id, r.tests_run, r.verified]), [
    ["s1", false, false],
    ["s2", true, true],
  ]);
  assert.equal(s.store.get("t1")!.verification_count, 1);
  assert.equal(s.store.get("t1")!.flagged_unverified, false);
});

Deno.test("TaskStore.complete(): an operator's completion of a run's task nobody worked on is recorded at once, unverified", async () => {
  await using s = await setup();
  await s.store.create([taskInput("t2")], { runId: "r1" });
  await s.store.complete("t2", { operator: true, tests_run: true }, completionVerdict(s.paths));
  const records = (await s.ledger()).filter((r) => r.task_id === "t2");
  assert.deepEqual(records.map((r) => [r.session_id, r.verified]), [["operator", false]]);
  assert.equal(s.store.get("t2")!.flagged_unverified, true);
  // A claimed task of a run waits for the verification step instead.
  assert.equal((await s.ledger()).filter((r) => r.task_id === "t1").length, 0);
});

Deno.test("VerificationStep: one completion verified twice at once is recorded once", async () => {
  await using s = await setup();
  const log = join(s.paths.runtime, "s1.log");
  await Deno.mkdir(s.paths.runtime, { recursive: true });
  await Deno.writeTextFile(log, "working…\n");
  const step = s.step();
  const handle = { sessionId: "s1", branch: "agent/s1", logPath: log };
  // A landing's verification and a reap's leftover record can meet (the verify stage runs
  // completions at once): whoever comes second finds the completion recorded.
  await Promise.all([step.verify("t1", handle), step.verify("t1", handle)]);
  assert.equal((await s.ledger()).length, 1);
  const rows = (await Deno.readTextFile(s.journal)).trim().split("\n").map((l) => JSON.parse(l));
  assert.equal(rows.filter((r) => r.type === "task_verification_recorded").length, 1);
  assert.deepEqual(s.alerts, ["1/1"]);
});

Deno.test("VerificationStep: completions verified at once trip the alert once", async () => {
  await using s = await setup();
  const ids = ["t2", "t3", "t4", "t5", "t6", "t7"];
  await s.store.create(ids.map((id) => taskInput(id)), { runId: "r1" });
  await Deno.mkdir(s.paths.runtime, { recursive: true });
  for (const id of ids) {
    await s.store.claim(id, `s-${id}`);
    await s.store.complete(id, { summary: "done" }, completionVerdict(s.paths));
    await Deno.writeTextFile(join(s.paths.runtime, `s-${id}.log`), "working…\n");
  }
  const step = s.step();
  await Promise.all(ids.map((id) =>
    step.verify(id, {
      sessionId: `s-${id}`,
      branch: `agent/s-${id}`,
      logPath: join(s.paths.runtime, `s-${id}.log`),
    })
  ));
  assert.equal((await s.ledger()).length, ids.length);
  assert.equal(s.alerts.length, 1, `the alert tripped ${s.alerts.length} times: ${s.alerts}`);
});
