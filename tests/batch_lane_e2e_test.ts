/**
 * End to end: the batch lane (DESIGN.md §15) with the providers' batch APIs faked on a free port
 * (tests/fakes/anthropic_batches_api.ts, openai_batch_api.ts). Real git and `service run` in its
 * own process with an environment of its own (test files running in parallel change this one's);
 * the agent CLI of the real-time fallback is the scripted agent standing in for the `claude` /
 * `codex` binary on PATH (the real CLIs run against their fakes in *_real_test.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type FakeBatchAnswer,
  type FakeBatchRequest,
  startFakeAnthropicBatches,
} from "./fakes/anthropic_batches_api.ts";
import { startFakeOpenAiBatches } from "./fakes/openai_batch_api.ts";
import {
  AGENT,
  browserPage,
  CLI,
  cli,
  journalOf,
  openRunPage,
  rowsOf,
  serveBoard,
  sh,
  until,
  workspace,
} from "./_e2e.ts";
import { runDeno, tempDir } from "./helpers.ts";
import { taskDetail } from "../lib/review/activity.ts";
import { workspacePaths } from "../lib/workspace.ts";

/** PATH as this process started (before any test changed it). */
const PATH = Deno.env.get("PATH") ?? "";

/** `service <args>` in `root`, in its own process with only `env` (and HOME) set. */
function service(root: string, env: Record<string, string>, ...args: string[]) {
  return runDeno(["run", "-A", CLI, "--root", root, ...args], { clearEnv: true, env });
}

/** `service run` in the background; its exit code and output once it ends. */
function serviceRunning(root: string, env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "plan.yaml", "--port", "0"],
    clearEnv: true,
    env: { HOME: Deno.env.get("HOME") ?? "", NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  return child.then((o) => ({
    code: o.code,
    text: new TextDecoder().decode(o.stdout) + new TextDecoder().decode(o.stderr),
  }));
}

/** The one run of `root`. */
async function onlyRun(root: string): Promise<string> {
  const runs = await Array.fromAsync(Deno.readDir(join(root, ".sdd/runs")));
  assert.equal(runs.length, 1);
  return runs[0].name;
}

/** The id of the run `root` has once its journal exists ("" before). */
async function runIdOf(root: string): Promise<string> {
  try {
    const id = await onlyRun(root);
    await Deno.stat(join(root, ".sdd/runs", id, "journal.jsonl"));
    return id;
  } catch {
    return "";
  }
}

/** A directory with `claude` and `codex` that run the scripted agent (its prompt is the last argument). */
async function fakeClis(dir: string): Promise<string> {
  const bin = join(dir, "bin");
  await Deno.mkdir(bin);
  for (const name of ["claude", "codex"]) {
    await Deno.writeTextFile(
      join(bin, name),
      `#!/bin/sh\nexec ${JSON.stringify(Deno.execPath())} run -A ${JSON.stringify(AGENT)} "$@"\n`,
    );
    await Deno.chmod(join(bin, name), 0o755);
  }
  return bin;
}

/** A patch from `from` to `to` of the one-line file `path`. */
function patch(path: string, from: string, to: string): string {
  return [
    "```diff",
    `diff --git a/${path} b/${path}`,
    `--- a/${path}`,
    `+++ b/${path}`,
    "@@ -1 +1 @@",
    `-${from}`,
    `+${to}`,
    "```",
  ].join("\n");
}

/** The fake's answers: upper-case the task's file, except `c.txt`, whose patch does not apply. */
function answer(r: FakeBatchRequest): FakeBatchAnswer {
  const task = /# Task (\S+):/.exec(r.user)?.[1];
  if (task === "t1") return { text: `Here it is.\n\n${patch("a.txt", "alpha", "ALPHA")}\n` };
  if (task === "t2") return { text: patch("b.txt", "beta", "BETA") };
  if (task === "t3") return { text: patch("c.txt", "delta", "DELTA") }; // c.txt holds gamma
  return { error: `unexpected request ${r.custom_id}` };
}

/** A Claude Code stream-json result line: what the real-time attempt spent. */
const RESULT_LINE = JSON.stringify({
  type: "result",
  subtype: "success",
  is_error: false,
  total_cost_usd: 0.02,
  usage: { input_tokens: 100, output_tokens: 10 },
  modelUsage: { "claude-sonnet-5": { inputTokens: 100, outputTokens: 10, costUSD: 0.02 } },
});

const STEPS = [
  { id: "t1", owned: ["a.txt"], batch: true, script: [["exit", 1]] },
  { id: "t2", owned: ["b.txt"], batch: true, script: [["exit", 1]] },
  {
    id: "t3",
    owned: ["c.txt"],
    batch: true,
    script: [["write", "c.txt", "GAMMA\n"], ["print", RESULT_LINE], ["report", "by hand"]],
  },
];

const FILES = { "a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n" };

/**
 * A workspace of `steps` whose adapter is claude, its batch lane polled every second, and the
 * environment its runs get: the fake CLIs first on PATH, the batch API at `apiUrl`.
 */
async function claudeBatchWorkspace(
  root: string,
  apiUrl: string,
  steps: typeof STEPS,
): Promise<Record<string, string>> {
  const bin = await fakeClis(root);
  await workspace(root, [{ name: "s", steps }], "", FILES);
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    "cli: claude\nroles:\n  backend: {}\nbatch:\n  poll_interval_s: 1\n",
  );
  await sh(root, "commit", "-qam", "claude");
  return {
    PATH: `${bin}:${PATH}`,
    ANTHROPIC_API_KEY: "sk-ant-test",
    ANTHROPIC_BASE_URL: apiUrl,
  };
}

Deno.test("batch lane: three tasks in one batch at half price; the patch that does not apply gets one real-time attempt", async () => {
  await using dir = await tempDir("batch-");
  await using fake = startFakeAnthropicBatches({ answer, apiKey: "sk-ant-test" });
  const env = await claudeBatchWorkspace(dir.path, fake.url, STEPS);

  const run = await service(dir.path, env, "run", "plan.yaml", "--port", "0");
  assert.equal(run.code, 0, run.text);
  const result = { runId: await onlyRun(dir.path) };
  for (const [file, text] of [["a.txt", "ALPHA\n"], ["b.txt", "BETA\n"], ["c.txt", "GAMMA\n"]]) {
    assert.equal(await sh(dir.path, "show", `main:${file}`), text, file);
  }

  // One batch of three requests, as the Message Batches API documents them.
  const submits = fake.requests.filter((r) => r.method === "POST");
  assert.equal(submits.length, 1, "one batch");
  const body = submits[0].body as {
    requests: { custom_id: string; params: Record<string, unknown> }[];
  };
  assert.equal(body.requests.length, 3);
  for (const r of body.requests) {
    assert.match(r.custom_id, /^[A-Za-z0-9_-]{1,64}$/);
    assert.equal(r.params.model, "claude-sonnet-5");
    assert.equal(typeof r.params.max_tokens, "number");
    assert.match(String(r.params.system), /unified diff/);
  }
  assert.equal(submits[0].headers["anthropic-version"], "2023-06-01");
  const t1Prompt = body.requests.map((r) => JSON.stringify(r.params.messages)).find((m) =>
    m.includes("# Task t1")
  )!;
  assert.match(t1Prompt, /### a\.txt\\n\\n```\\nalpha\\n```/, "the owned file is shown");

  const journal = await journalOf(dir.path, result.runId);
  assert.equal(journal.verified, true);
  const rows = journal.rows.map((r) => r.row);
  const submitted = rows.filter((r) => r.type === "task_batch_submitted");
  assert.deepEqual(submitted.map((r) => r.data.task_id).sort(), ["t1", "t2", "t3"]);
  assert.equal(new Set(submitted.map((r) => r.data.batch_id)).size, 1, "all in one batch");
  assert.equal(submitted[0].data.provider, "anthropic");
  const outcomes = Object.fromEntries(
    rows.filter((r) => r.type === "task_batch_result").map((r) => [r.data.task_id, r.data]),
  );
  assert.equal(outcomes.t1.outcome, "applied");
  assert.equal(outcomes.t2.outcome, "applied");
  assert.equal(outcomes.t3.outcome, "not_applied");
  assert.match(String(outcomes.t3.reason), /git apply --3way/);
  const t3Claims = rows.filter((r) => r.type === "task_claimed" && r.data.task_id === "t3");
  assert.deepEqual(t3Claims.map((r) => [r.data.lane ?? "real time", r.data.adapter]), [
    ["batch", "claude"],
    ["real time", "claude"],
  ], "exactly one real-time attempt after the batch");
  const retried = rows.find((r) => r.type === "task_retried" && r.data.task_id === "t3")!;
  assert.match(String(retried.data.reason), /did not apply.*one real-time attempt/);
  // The batch try counted no attempt: the terminal says what the retry limit counts.
  assert.match(run.text, /t3: agent \S+ started \(backend, attempt 2, counted as 1 of 3\)/);
  assert.equal(rows.filter((r) => r.type === "task_claimed" && r.data.task_id === "t1").length, 1);

  // Cost: the batch price is half the real-time price of the same tokens.
  const report = JSON.parse(
    await Deno.readTextFile(join(dir.path, ".sdd/runtime/cost_report.json")),
  );
  // claude-sonnet-5 at $3 / $15 per MTok: 2000 in + 400 out = 12 000 µUSD in real time.
  assert.deepEqual(report.by_task.t1, { micro_usd: 6000, model: "claude-sonnet-5", batch: true });
  assert.equal(report.by_task.t2.batch, true);
  assert.equal(report.by_task.t3.batch, false, "its real-time attempt is charged as real time");
  assert.equal(report.by_task.t3.micro_usd, 6000 + 20_000);
  const cost = await cli(dir.path, "cost", "--by", "task");
  assert.equal(cost.code, 0, cost.out);
  assert.match(
    cost.out,
    /saved by batching: \$0\.0180 \(3 tasks through the batch lane cost \$0\.0180, \$0\.0360 at real-time prices\)/,
  );

  // The board: t1's card says "batch"; t3's current attempt is the real-time one.
  await using server = await serveBoard(dir.path);
  await using browser = await browserPage();
  await openRunPage(browser.page, server.url, result.runId);
  assert.equal(await browser.page.locator("[data-task-id=t1] [data-lane=batch]").count(), 1);
  assert.equal(await browser.page.locator("[data-task-id=t3] [data-lane=batch]").count(), 0);
});

Deno.test("batch lane: a batch in flight when the run stops is polled after `service run` resumes, never submitted twice", async () => {
  await using dir = await tempDir("batch-stop-");
  await using fake = startFakeAnthropicBatches({ answer });
  fake.hold = true;
  const env = await claudeBatchWorkspace(dir.path, fake.url, [STEPS[0]]);

  const first = serviceRunning(dir.path, env);
  let runId = "";
  await until("the request is submitted", async () => {
    runId ||= await runIdOf(dir.path);
    return runId !== "" &&
      (await rowsOf(dir.path, runId)).some((r) => r.type === "task_batch_submitted");
  });
  const status = await cli(dir.path, "status", "--json");
  const inFlight = JSON.parse(status.out).batches.in_flight;
  assert.equal(inFlight.length, 1, status.out);
  assert.equal(inFlight[0].task_id, "t1");
  assert.ok(inFlight[0].age_s >= 0);
  const text = await cli(dir.path, "status");
  assert.match(
    text.out,
    /batches: 1 request\(s\) in flight in 1 batch\(es\)\n {2}msgbatch_\S+ \(anthropic, claude-sonnet-5\): t1 — submitted \d+s ago/,
  );
  const stop = await service(dir.path, env, "stop");
  assert.equal(stop.code, 0, stop.text);
  const stopped = await first;
  assert.match(
    stopped.text,
    /t1: (?:CLAIMED|IN_PROGRESS) — its batch request \(msgbatch_\S+\) stays with the provider \(`service run` polls it\)/,
  );

  fake.hold = false;
  const resumed = await service(dir.path, env, "run", "--port", "0");
  assert.equal(resumed.code, 0, resumed.text);
  assert.match(resumed.text, new RegExp(`resuming run ${runId}`));
  assert.match(resumed.text, /t1: polling batch msgbatch_\S+, submitted before the run stopped/);
  assert.equal(fake.requests.filter((r) => r.method === "POST").length, 1, "submitted once");
  assert.equal(await sh(dir.path, "show", "main:a.txt"), "ALPHA\n");
  const rows = await rowsOf(dir.path, runId);
  assert.deepEqual(
    rows.filter((r) => r.type === "task_batch_result").map((r) => r.data.outcome),
    ["applied"],
  );
  assert.equal(rows.filter((r) => r.type === "task_claimed").length, 1, "no second attempt");
});

Deno.test("batch lane: codex tasks go through OpenAI's Batch API (file upload, batch, output file)", async () => {
  await using dir = await tempDir("batch-openai-");
  await using fake = startFakeOpenAiBatches({ answer });
  const env = {
    PATH: `${await fakeClis(dir.path)}:${PATH}`,
    OPENAI_API_KEY: "sk-test",
    OPENAI_BASE_URL: `${fake.url}/v1`,
  };
  await workspace(dir.path, [{ name: "s", steps: [STEPS[1]] }], "", FILES);
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    "cli: codex\nroles:\n  backend: {}\nbatch:\n  poll_interval_s: 1\n",
  );
  await sh(dir.path, "commit", "-qam", "codex");
  const run = await service(dir.path, env, "run", "plan.yaml", "--port", "0");
  assert.equal(run.code, 0, run.text);
  assert.equal(await sh(dir.path, "show", "main:b.txt"), "BETA\n");
  assert.deepEqual(fake.requests.filter((r) => r.method === "POST").map((r) => r.path), [
    "/v1/files",
    "/v1/batches",
  ]);
  const batch = [...fake.batches.values()][0];
  assert.equal(batch.requests[0].model, "gpt-6-sol");
  const report = JSON.parse(
    await Deno.readTextFile(join(dir.path, ".sdd/runtime/cost_report.json")),
  );
  assert.equal(report.by_task.t2.batch, true);
});

Deno.test("batch lane: cancelling a task whose request is in flight drops its result, recorded once", async () => {
  await using dir = await tempDir("batch-cancel-");
  await using fake = startFakeAnthropicBatches({ answer });
  fake.hold = true;
  const env = await claudeBatchWorkspace(dir.path, fake.url, [STEPS[0]]);
  const running = serviceRunning(dir.path, env);
  let runId = "";
  await until("the request is submitted", async () => {
    runId ||= await runIdOf(dir.path);
    return runId !== "" &&
      (await rowsOf(dir.path, runId)).some((r) => r.type === "task_batch_submitted");
  });
  const cancel = await service(dir.path, env, "cancel", "t1", "--reason", "not needed");
  assert.equal(cancel.code, 0, cancel.text);
  const result = await running;
  assert.equal(result.code, 0, result.text);
  const rows = await rowsOf(dir.path, runId);
  assert.deepEqual(
    rows.filter((r) => r.type === "task_batch_result").map((r) => [r.data.outcome, r.data.reason]),
    [["dropped", "the task was cancelled"]],
  );
  assert.equal(rows.filter((r) => r.type === "task_cancelled").length, 1);
  assert.equal(await sh(dir.path, "show", "main:a.txt"), "alpha\n", "nothing landed");
  // No task of the batch is wanted any more: it is canceled at the provider, so it is not billed.
  await until("the batch is canceled at the provider", () =>
    Promise.resolve(
      fake.requests.some((r) => r.method === "POST" && r.path.endsWith("/cancel")),
    ));
  assert.match(
    result.text,
    /batch msgbatch_\S+: no task of it is wanted any more; canceled at the provider/,
  );
});

Deno.test("batch lane: a cancelled task's request that the provider ran anyway is counted in the spend; its batch goes on for the others", async () => {
  await using dir = await tempDir("batch-billed-");
  await using fake = startFakeAnthropicBatches({ answer });
  fake.hold = true;
  const env = await claudeBatchWorkspace(dir.path, fake.url, [STEPS[0], STEPS[1]]);
  const running = serviceRunning(dir.path, env);
  let runId = "";
  await until("both requests are submitted", async () => {
    runId ||= await runIdOf(dir.path);
    return runId !== "" &&
      (await rowsOf(dir.path, runId)).filter((r) => r.type === "task_batch_submitted").length ===
        2;
  });
  const cancel = await service(dir.path, env, "cancel", "t1", "--reason", "not needed");
  assert.equal(cancel.code, 0, cancel.text);
  await until(
    "the cancel is journaled",
    async () => (await rowsOf(dir.path, runId)).some((r) => r.type === "task_batch_result"),
  );
  fake.hold = false;
  const result = await running;
  assert.equal(result.code, 0, result.text);
  assert.equal(
    fake.requests.filter((r) => r.path.endsWith("/cancel")).length,
    0,
    "t2 still wants the batch",
  );
  assert.equal(await sh(dir.path, "show", "main:b.txt"), "BETA\n");
  assert.equal(await sh(dir.path, "show", "main:a.txt"), "alpha\n", "t1's answer is not used");
  const report = JSON.parse(
    await Deno.readTextFile(join(dir.path, ".sdd/runtime/cost_report.json")),
  );
  assert.deepEqual(report.by_task.t1, { micro_usd: 6000, model: "claude-sonnet-5", batch: true });
  assert.equal(report.total_micro_usd, 12_000, "both requests the provider billed");
});

Deno.test("batch lane: a patch's worktree gets what an agent's would (copies, setup with the agent's environment)", async () => {
  await using dir = await tempDir("batch-env-");
  await using fake = startFakeAnthropicBatches({ answer, apiKey: "sk-ant-test" });
  const env = {
    PATH: `${await fakeClis(dir.path)}:${PATH}`,
    ANTHROPIC_API_KEY: "sk-ant-test",
    ANTHROPIC_BASE_URL: fake.url,
  };
  await workspace(dir.path, [{ name: "s", steps: [STEPS[0]] }], "", FILES);
  const prepared = join(dir.path, "..", `${dir.path.split("/").pop()}-prepared.log`);
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    "cli: claude\nroles:\n  backend:\n    worktree:\n      copy: ['.env']\n" +
      `      setup: ['echo "$SERVICE_TASK_ID $(cat .env)" >> ${prepared}']\n` +
      "batch:\n  poll_interval_s: 1\n",
  );
  await Deno.writeTextFile(join(dir.path, ".env"), "SECRET=local\n"); // untracked, as usual
  await sh(dir.path, "add", "service.yaml");
  await sh(dir.path, "commit", "-qm", "claude");
  try {
    const run = await service(dir.path, env, "run", "plan.yaml", "--port", "0");
    assert.equal(run.code, 0, run.text);
    assert.equal(await sh(dir.path, "show", "main:a.txt"), "ALPHA\n");
    assert.equal(await Deno.readTextFile(prepared), "t1 SECRET=local\n");
    const rows = await rowsOf(dir.path, await onlyRun(dir.path));
    assert.deepEqual(
      rows.filter((r) => r.type === "task_batch_result").map((r) => r.data.outcome),
      ["applied"],
    );
    await assert.rejects(sh(dir.path, "show", "main:.env"), "the copied file is never merged");
  } finally {
    await Deno.remove(prepared).catch(() => {});
  }
});

Deno.test("batch lane: what a request that came to nothing said is kept with the run for the board (an error, CANNOT_APPLY, an answer too long to read)", async () => {
  await using dir = await tempDir("batch-said-");
  const said: Record<string, FakeBatchAnswer> = {
    e1: { error: "max_tokens: 999999 > 64000" },
    e2: { text: "CANNOT_APPLY: \x1b]0;owned\x07the file is generated" },
    e3: { text: "```diff\n" + "x".repeat(3_000_000) + "\n```\n" },
  };
  await using fake = startFakeAnthropicBatches({
    answer: (r) => said[/# Task (\S+):/.exec(r.user)![1]],
  });
  const env = {
    PATH: `${await fakeClis(dir.path)}:${PATH}`,
    ANTHROPIC_API_KEY: "sk-ant-test",
    ANTHROPIC_BASE_URL: fake.url,
  };
  const steps = Object.keys(said).map((id) => ({
    id,
    owned: [`${id}.txt`],
    batch: true,
    script: [["write", `${id}.txt`, "by hand\n"], ["report", "by hand"]],
  }));
  await workspace(dir.path, [{ name: "s", steps }]);
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    "cli: claude\nroles:\n  backend: {}\nbatch:\n  poll_interval_s: 1\n",
  );
  await sh(dir.path, "commit", "-qam", "claude");
  const run = await service(dir.path, env, "run", "plan.yaml", "--port", "0");
  assert.equal(run.code, 0, run.text);
  const runId = await onlyRun(dir.path);
  const rows = await rowsOf(dir.path, runId);
  const outcomes = Object.fromEntries(
    rows.filter((r) => r.type === "task_batch_result").map((r) => [r.data.task_id, r.data]),
  );
  assert.deepEqual(
    Object.keys(said).map((id) => outcomes[id].outcome),
    ["errored", "not_applied", "not_applied"],
  );
  assert.match(
    String(outcomes.e3.reason),
    /the answer is 3000013 characters long, more than the 1000000 the lane reads/,
  );
  const expected: Record<string, string> = {
    e1: "--- errored ---\ninvalid_request_error: max_tokens: 999999 > 64000",
    // As the model wrote it: the log is data, escaped where it is shown.
    e2: "--- answer (claude-sonnet-5) ---\nCANNOT_APPLY: \x1b]0;owned\x07the file is generated",
    e3: "--- 2936013 more characters left out ---",
  };
  for (const id of Object.keys(said)) {
    const detail = await taskDetail(workspacePaths(dir.path), runId, id);
    const [batch, realTime] = detail.task.attempts;
    assert.equal(batch.batch?.outcome, outcomes[id].outcome, id);
    assert.ok(batch.log, `${id}: the batch attempt's log is kept with the run`);
    assert.equal(batch.log.verified, true, id);
    const kept = await Deno.readTextFile(
      join(dir.path, ".sdd/runs", runId, "logs", `${batch.session_id}.log`),
    );
    assert.match(kept, /^batch request \S+ to the anthropic batch API/, id);
    assert.ok(kept.includes(expected[id]), `${id}: ${kept.slice(-300)}`);
    assert.ok(kept.length < 200_000, `${id}: an answer too long is not written whole`);
    assert.equal(realTime.outcome, "merged", id);
  }
});

Deno.test("batch lane: a task of the same id in a later run (its step changed) goes through the lane again, not to real time at twice the price", async () => {
  await using dir = await tempDir("batch-again-");
  // The second run's t1 turns a.txt back to lower case.
  await using fake = startFakeAnthropicBatches({
    answer: (r) =>
      r.user.includes("Task t1 again.")
        ? { text: patch("a.txt", "ALPHA", "alpha, again") }
        : answer(r),
  });
  const env = await claudeBatchWorkspace(dir.path, fake.url, [STEPS[0]]);
  const first = await service(dir.path, env, "run", "plan.yaml", "--port", "0");
  assert.equal(first.code, 0, first.text);
  // The step changes: the next run has a new t1.
  const plan = await Deno.readTextFile(join(dir.path, "plan.yaml"));
  await Deno.writeTextFile(join(dir.path, "plan.yaml"), plan.replace("Task t1.", "Task t1 again."));
  await sh(dir.path, "commit", "-qam", "t1 again");
  const second = await service(dir.path, env, "run", "plan.yaml", "--port", "0");
  assert.equal(second.code, 0, second.text);
  assert.match(second.text, /t1: submitted to the anthropic batch API/);
  assert.equal(fake.requests.filter((r) => r.method === "POST").length, 2, "one batch a run");
  assert.equal(await sh(dir.path, "show", "main:a.txt"), "alpha, again\n");
  const runs = (await Array.fromAsync(Deno.readDir(join(dir.path, ".sdd/runs")))).map((r) => r.name)
    .sort();
  const rows = await rowsOf(dir.path, runs[1]);
  assert.deepEqual(
    rows.filter((r) => r.type === "task_claimed").map((r) => r.data.lane ?? "real time"),
    ["batch"],
  );
});

Deno.test("batch lane: a task whose step or role chose another adapter runs with it in real time, never through the configured adapter's batch API", async () => {
  await using dir = await tempDir("batch-own-cli-");
  await using fake = startFakeAnthropicBatches({ answer });
  const env = {
    PATH: `${await fakeClis(dir.path)}:${PATH}`,
    ANTHROPIC_API_KEY: "sk-ant-test",
    ANTHROPIC_BASE_URL: fake.url,
    OPENAI_API_KEY: "sk-test",
  };
  const wrote = (id: string) => [["write", `${id}.txt`, `${id} by codex\n`], ["report", "done"]];
  await workspace(dir.path, [{
    name: "s",
    steps: [
      {
        id: "by-step",
        owned: ["by-step.txt"],
        batch: true,
        cli: "codex",
        script: wrote("by-step"),
      },
      {
        id: "by-role",
        role: "docs",
        owned: ["by-role.txt"],
        batch: true,
        script: wrote("by-role"),
      },
    ],
  }]);
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    "cli: claude\nroles:\n  backend: {}\n  docs:\n    cli: codex\nbatch:\n  poll_interval_s: 1\n",
  );
  await sh(dir.path, "commit", "-qam", "claude, with codex tasks");
  const run = await service(dir.path, env, "run", "plan.yaml", "--port", "0");
  assert.equal(run.code, 0, run.text);
  assert.deepEqual(fake.requests.filter((r) => r.method === "POST"), [], "nothing to Anthropic");
  const rows = await rowsOf(dir.path, await onlyRun(dir.path));
  assert.deepEqual(
    rows.filter((r) => r.type === "task_claimed").map((r) => [
      r.data.task_id,
      r.data.adapter,
      r.data.lane ?? "real time",
    ]).sort(),
    [["by-role", "codex", "real time"], ["by-step", "codex", "real time"]],
  );
  assert.equal(await sh(dir.path, "show", "main:by-step.txt"), "by-step by codex\n");
});
