/**
 * Landing through GitHub pull requests, end to end (DESIGN.md §12): a real workspace whose
 * `origin` is the fake GitHub's bare repository (its `pre-receive` hook refuses pushes to
 * `main`), the scripted agent, the real run loop. Work reaches `main` only by the fake's merge of
 * a pull request, and only when its required checks and reviews allow it.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { runPlan } from "../lib/runner/run.ts";
import { runDoctor } from "../lib/cli/commands/doctor.ts";
import { SERVER_APP } from "../routes/_app.ts";
import {
  CLI,
  journalOf,
  rowsOf,
  sh,
  type Step,
  until,
  watchedRun,
  withEnv,
  workspace,
} from "./_e2e.ts";
import { type FakeGithubOptions, startFakeGithub } from "./fakes/github_api.ts";
import { tempDir } from "./helpers.ts";
import { signBody } from "../lib/webhooks/signature.ts";

type Row = Awaited<ReturnType<typeof rowsOf>>[number];

/** A workspace landing through the fake GitHub, with `token` in the token variable. */
async function landingWorkspace(
  dir: string,
  steps: Step[],
  options: FakeGithubOptions & {
    token?: string;
    pollS?: number;
    /** More `landing:` keys (indented). */
    landing?: string;
    /** More top-level service.yaml. */
    extra?: string;
  } = {},
) {
  await workspace(dir, [{ name: "s", steps }]);
  const fake = await startFakeGithub(dir, options);
  await sh(dir, "remote", "add", "origin", fake.bare);
  const tokenEnv = `FAKE_GH_TOKEN_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  // Not committed: main is protected, and the run reads service.yaml from the workspace.
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `landing:\n  mode: pull_request\n  provider: github\n  api_url: ${fake.url}\n` +
      `  repo: ${options.repo ?? "acme/widget"}\n  token_env: ${tokenEnv}\n` +
      `  poll_interval_s: ${options.pollS ?? 1}\n${options.landing ?? ""}${options.extra ?? ""}`,
    { append: true },
  );
  const env = withEnv({ [tokenEnv]: options.token ?? "gh-token" });
  return {
    fake,
    async [Symbol.asyncDispose]() {
      env[Symbol.dispose]();
      await fake[Symbol.asyncDispose]();
    },
  };
}

/** `service run` in `root` as a child process, killed with SIGKILL once `moment` comes; its run. */
async function killedWhen(root: string, moment: Promise<void>): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "run", "--port", "0"],
    env: { NO_COLOR: "1" },
    stdout: "null",
    stderr: "null",
  }).spawn();
  await moment;
  child.kill("SIGKILL");
  await child.status;
  return JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json"))).run_id;
}

function ofType(rows: Row[], type: string): Row[] {
  return rows.filter((r) => r.type === type);
}

/** Wait until the run journals a `task_pr_status` whose `waits_for` matches `words`. */
async function waitsFor(dir: string, run: { runId: string }, words: RegExp) {
  await until(`a pull request that ${words}`, async () =>
    run.runId !== "" &&
    (await rowsOf(dir, run.runId).catch(() => [] as Row[])).some((r) =>
      r.type === "task_pr_status" && words.test(String(r.data.waits_for ?? ""))
    ));
}

Deno.test("a task lands through a pull request the host merges; main is never pushed to", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report", "wrote feature.txt"]],
  }], {
    requiredChecks: ["ci/test"],
    extra: "server:\n  public_url: https://board.example.com\n",
  });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));

  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const opened = ofType(rows, "task_pr_opened");
  assert.equal(opened.length, 1);
  assert.equal(opened[0].data.number, 1);
  assert.match(String(opened[0].data.url), /\/pull\/1$/);
  const merged = ofType(rows, "task_merged")[0];
  const mainTip = await sh(gh.fake.bare, "rev-parse", "refs/heads/main");
  assert.equal(merged.data.commit, mainTip.trim(), "task_merged names the host's merge commit");
  assert.equal(merged.data.pr, opened[0].data.url);
  assert.equal(await sh(gh.fake.bare, "show", "main:feature.txt"), "done\n");
  assert.deepEqual(await gh.fake.refusedPushes(), [], "nothing was pushed to main");
  const [pr] = gh.fake.pulls();
  assert.equal(pr.merged, true);
  assert.match(pr.body, /### What was asked[\s\S]*Task feature\./);
  assert.match(pr.body, /### What the agent reported\n\n```text\nwrote feature.txt/);
  assert.match(
    pr.body,
    /Review board: https:\/\/board\.example\.com\/dashboard\/review-board\?run=.*&task=feature/,
    "the board's public address, not the loopback one",
  );
  // The local clone's base never moved: the service does not commit on the user's branch.
  assert.equal(
    (await sh(dir.path, "rev-parse", "main")).trim(),
    (await sh(dir.path, "rev-parse", "HEAD")).trim(),
  );
  assert.equal(
    (await sh(dir.path, "rev-parse", "refs/remotes/origin/main")).trim(),
    mainTip.trim(),
  );
});

Deno.test("a required check still running holds the merge; it merges once the check is green", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], {
    requiredChecks: ["ci/test"],
    ci: () => [{ name: "ci/test", status: "in_progress" }, {
      name: "lint",
      status: "completed",
      conclusion: "failure",
      summary: "not required, never holds a merge",
    }],
  });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /^waits for required check `ci\/test`$/);
  // `status` reads what the loop published once it decided the row's event (a moment later).
  await until("status to say what it waits for", async () => {
    const state = JSON.parse(
      await Deno.readTextFile(join(dir.path, ".sdd/runtime/orchestrator.json")),
    );
    return /pull request #1 waits for required check `ci\/test`/.test(
      String(state.waiting?.feature),
    );
  });
  assert.equal(gh.fake.pulls()[0].merged, false);
  const detail = await (await fetch(`${run.url}/review-board/runs/${run.runId}/tasks/feature`))
    .json();
  assert.equal(detail.task.pull_request.number, 1);
  assert.match(detail.task.pull_request.url, /\/pull\/1$/);
  assert.equal(detail.task.pull_request.waits_for, "waits for required check `ci/test`");
  assert.deepEqual(
    detail.task.pull_request.checks.map((c: { name: string; state: string; required: boolean }) => [
      c.name,
      c.state,
      c.required,
    ]),
    [["ci/test", "pending", true], ["lint", "failure", false]],
  );
  gh.fake.setCheck(await gh.fake.headOf(1), {
    name: "ci/test",
    status: "completed",
    conclusion: "success",
  });
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gh.fake.pulls()[0].merged, true);
});

Deno.test("a failed required check sends the task to a new attempt told the check's name", async () => {
  await using dir = await tempDir();
  let heads = 0;
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [
      ["first_attempt", [["write", "feature.txt", "broken\n"], ["report"]]],
      ["retry", [
        ["require_prompt", "ci/test"],
        ["require_prompt", "3 tests failed"],
        ["write", "feature.txt", "fixed\n"],
        ["report"],
      ]],
    ],
  }], {
    requiredChecks: ["ci/test"],
    ci: () =>
      heads++ === 0
        ? [{
          name: "ci/test",
          status: "completed",
          conclusion: "failure",
          summary: "3 tests failed",
        }]
        : [{ name: "ci/test", status: "completed", conclusion: "success" }],
    // Not flaky: its re-run (landing.rerun_failed_checks) fails the same way.
    rerun: () => ({
      name: "ci/test",
      status: "completed",
      conclusion: "failure",
      summary: "3 tests failed",
    }),
  });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  assert.equal(ofType(rows, "task_pr_check_rerun").length, 1, "re-run once first");
  const failed = ofType(rows, "task_verification_failed")[0];
  assert.equal(
    (failed.data.signals as { kind: string; detail: string }[])[0].kind,
    "required_check",
  );
  assert.equal((failed.data.signals as { kind: string; detail: string }[])[0].detail, "ci/test");
  assert.match(
    String(ofType(rows, "task_retried")[0].data.reason),
    /required check `ci\/test` failed/,
  );
  const pulls = gh.fake.pulls();
  assert.equal(pulls.length, 2, "the new attempt opened its own pull request");
  assert.deepEqual(pulls.map((p) => [p.state, p.merged]), [["closed", false], ["closed", true]]);
  assert.match(pulls[1].body, /It replaces #1/);
  assert.equal(ofType(rows, "task_pr_closed")[0].data.number, 1);
  assert.equal(await sh(gh.fake.bare, "show", "main:feature.txt"), "fixed\n");
});

Deno.test("a base that requires an approving review merges once a reviewer approves", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], { approvals: 1 });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /^waits for 1 approving review$/);
  assert.equal(gh.fake.pulls()[0].merged, false);
  await gh.fake.review(1, "alice", "APPROVED");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gh.fake.pulls()[0].merged, true);
});

Deno.test("a pull request a person closes cancels its task with their reason", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], { approvals: 1 });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /approving review/);
  gh.fake.closeByPerson(1, "alice", "We went another way.");
  await run.result;
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const closed = ofType(rows, "task_pr_closed")[0];
  assert.match(
    String(closed.data.reason),
    /closed by alice without merging: "We went another way\."/,
  );
  const cancelled = ofType(rows, "task_cancelled")[0];
  assert.match(String(cancelled.data.reason), /closed by alice/);
  assert.equal(ofType(rows, "task_merged").length, 0);
  assert.equal(ofType(rows, "task_claimed").length, 1, "no new attempt");
  assert.equal(gh.fake.pulls().length, 1);
  // The terminal says it once, with who closed it and why.
  assert.deepEqual(
    run.lines.filter((l) => /closed by alice/.test(l)).map((l) => l.replace(/^\[\s*\d+s\] /, "")),
    ['feature: cancelled: pull request #1 was closed by alice without merging: "We went another way."'],
  );
});

Deno.test("a token without pull-request permission is refused before run_started", async () => {
  await using dir = await tempDir();
  await using _gh = await landingWorkspace(dir.path, [{ id: "feature", script: [["report"]] }], {
    tokens: { "read-only": { push: false, pullRequests: false } },
    token: "read-only",
  });
  await assert.rejects(
    () => runPlan({ root: dir.path, port: 0, app: SERVER_APP, out: () => {} }),
    (e: Error & { fix?: string }) => {
      assert.match(e.message, /cannot push to acme\/widget/);
      assert.match(e.message, /Pull requests: Read and write/);
      assert.match(String(e.fix), /Contents: Read and write/);
      return true;
    },
  );
  assert.equal(existsSync(join(dir.path, ".sdd/runs")), false, "no run was started");
  const doctor = (await runDoctor(dir.path)).filter((r) => r.name.startsWith("landing"));
  assert.ok(doctor.every((r) => !r.ok));
  assert.ok(doctor.some((r) => /Pull requests: Read and write/.test(r.detail)), "doctor names it");
  assert.ok(doctor.some((r) => /Contents: Read and write/.test(String(r.fix))));
});

Deno.test("kill -9 between the push and the pull request: the restarted run opens no second one and pushes nothing again", async () => {
  await using dir = await tempDir();
  const posted = Promise.withResolvers<void>();
  const held = Promise.withResolvers<void>();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], {
    beforeCreate: () => {
      posted.resolve();
      return held.promise;
    },
  });
  const runId = await killedWhen(dir.path, posted.promise); // pushed; GitHub creates the PR
  held.resolve(); // GitHub created it; the service never heard
  assert.equal(
    (await rowsOf(dir.path, runId)).filter((r) => r.type === "task_pr_opened").length,
    0,
    "the killed process never journaled it",
  );
  const pushed = (await gh.fake.pushes()).length;
  assert.equal(pushed, 1, "the agent branch was pushed once");

  const resumed = await runPlan({ root: dir.path, port: 0, app: SERVER_APP, out: () => {} });
  assert.equal(resumed.status, "completed", resumed.problems.join("; "));
  assert.equal(resumed.runId, runId);
  assert.equal(gh.fake.pulls().length, 1, "no second pull request");
  assert.equal(gh.fake.pulls()[0].merged, true);
  assert.equal((await gh.fake.pushes()).length, pushed, "the same work was not pushed again");
  const rows = (await journalOf(dir.path, runId)).rows.map((r) => r.row);
  assert.equal(ofType(rows, "task_pr_opened").length, 1, "found and recorded once");
  assert.equal(ofType(rows, "task_merged")[0].data.pr, ofType(rows, "task_pr_opened")[0].data.url);
});

Deno.test("a base that requires a merge queue: the pull request is enqueued (GraphQL) and the queue merges it", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], { requiredChecks: ["ci/test"], mergeQueue: true });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  assert.ok(
    rows.some((r) => r.type === "task_pr_updated" && r.data.reason === "added to the merge queue"),
  );
  assert.ok(gh.fake.requests.includes("POST /graphql"), "enqueued through GraphQL");
  assert.ok(
    !gh.fake.requests.some((r) => /^PUT .*\/merge$/.test(r)),
    "never merged around the queue",
  );
  assert.equal(
    ofType(rows, "task_merged")[0].data.commit,
    (await sh(gh.fake.bare, "rev-parse", "main")).trim(),
  );
});

Deno.test("kill -9 between GitHub's merge and the journal row: the restarted run records the host's merge commit, once", async () => {
  await using dir = await tempDir();
  const merged = Promise.withResolvers<void>();
  const held = Promise.withResolvers<void>();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], {
    afterMerge: () => {
      merged.resolve();
      return held.promise; // the service is killed before GitHub answers
    },
  });
  const runId = await killedWhen(dir.path, merged.promise);
  held.resolve();
  assert.equal(ofType(await rowsOf(dir.path, runId), "task_merged").length, 0);

  const resumed = await runPlan({ root: dir.path, port: 0, app: SERVER_APP, out: () => {} });
  assert.equal(resumed.status, "completed", resumed.problems.join("; "));
  const rows = (await journalOf(dir.path, runId)).rows.map((r) => r.row);
  const landed = ofType(rows, "task_merged");
  assert.equal(landed.length, 1);
  assert.equal(landed[0].data.commit, (await sh(gh.fake.bare, "rev-parse", "main")).trim());
  assert.equal(gh.fake.pulls().length, 1, "no second pull request");
  assert.equal(
    gh.fake.requests.filter((r) => /^PUT .*\/merge$/.test(r)).length,
    1,
    "merged once",
  );
});

Deno.test("changes requested by a reviewer: a new attempt whose prompt holds the review, no attempt counted", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [
      ["first_attempt", [["write", "feature.txt", "v1\n"], ["report"]]],
      ["retry", [["require_prompt", "please call it v2"], ["write", "feature.txt", "v2\n"], [
        "report",
      ]]],
    ],
  }], { approvals: 1 });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /approving review/);
  await gh.fake.review(1, "alice", "CHANGES_REQUESTED", "please call it v2");
  await waitsFor(dir.path, run, /approving review/); // the new attempt's pull request
  await until("the second pull request", () => Promise.resolve(gh.fake.pulls().length === 2));
  await gh.fake.review(2, "alice", "APPROVED");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  assert.match(
    String(ofType(rows, "task_retried")[0].data.reason),
    /alice requested changes on .*\/pull\/1/,
  );
  assert.doesNotMatch(String(ofType(rows, "task_retried")[0].data.reason), /failed attempt/);
  assert.equal(await sh(gh.fake.bare, "show", "main:feature.txt"), "v2\n");
  assert.deepEqual(gh.fake.pulls().map((p) => p.merged), [false, true]);
});

Deno.test("a base that requires up-to-date branches (strict) moved under an open pull request: rebased, gated again, pushed with lease to the same pull request", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [
    { id: "a", script: [["write", "a.txt", "a\n"], ["report"]] },
    { id: "b", script: [["write", "b.txt", "b\n"], ["report"]] },
  ], { approvals: 1, strict: true });
  const run = watchedRun(dir.path);
  await until("two pull requests waiting for review", async () =>
    run.runId !== "" &&
    ofType(await rowsOf(dir.path, run.runId), "task_pr_status").filter((r) =>
        /approving review/.test(String(r.data.waits_for))
      ).length >= 2);
  const first = gh.fake.pulls()[0];
  const other = gh.fake.pulls()[1];
  const before = await gh.fake.headOf(other.number);
  await gh.fake.review(first.number, "alice", "APPROVED");
  await until(
    "the other pull request rebased",
    async () =>
      ofType(await rowsOf(dir.path, run.runId), "task_pr_updated").some((r) =>
        r.data.number === other.number && /^rebased onto main/.test(String(r.data.reason))
      ),
  );
  const after = await gh.fake.headOf(other.number);
  assert.notEqual(after, before);
  const main = (await sh(gh.fake.bare, "rev-parse", "main")).trim();
  assert.equal((await sh(gh.fake.bare, "merge-base", main, after)).trim(), main, "on the new base");
  await gh.fake.review(other.number, "alice", "APPROVED");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gh.fake.pulls().length, 2, "the same pull request, updated");
  assert.ok(gh.fake.pulls().every((p) => p.merged));
  assert.deepEqual(await gh.fake.refusedPushes(), []);
});

Deno.test("a GitHub check_run webhook wakes the landing at once: no poll needed", async () => {
  await using dir = await tempDir();
  const secretEnv = `WH_LANDING_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  using _secret = withEnv({ [secretEnv]: "hook-secret" });
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], {
    requiredChecks: ["ci/test"],
    ci: () => [{ name: "ci/test", status: "in_progress" }],
    pollS: 600, // with the webhook: a look every 50 minutes
    extra: `trackers:\n  tracker_b:\n    webhook: { enabled: true, secret_env: ${secretEnv} }\n`,
  });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /required check `ci\/test`/);
  const sha = await gh.fake.headOf(1);
  gh.fake.setCheck(sha, { name: "ci/test", status: "completed", conclusion: "success" });
  const body = JSON.stringify({
    action: "completed",
    check_run: {
      id: 1,
      name: "ci/test",
      head_sha: sha,
      status: "completed",
      conclusion: "success",
    },
    repository: { id: 9, full_name: "acme/widget" },
  });
  const res = await fetch(`${run.url}/webhooks/trackers/tracker_b`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "X-GitHub-Event": "check_run",
      "X-GitHub-Delivery": crypto.randomUUID(),
      "X-Hub-Signature-256": signBody("hub-sha256", "hook-secret", body),
    },
    body,
  });
  assert.equal(res.status, 200, await res.text());
  const started = Date.now();
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.ok(Date.now() - started < 30_000, "merged on the webhook, not on a poll");
  assert.equal(gh.fake.pulls()[0].merged, true);
});

Deno.test("GitHub down for a while never fails a task: the landing waits, backs off, and merges when it is back", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], { requiredChecks: ["ci/test"], ci: () => [{ name: "ci/test", status: "in_progress" }] });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /required check `ci\/test`/);
  gh.fake.setDown(true);
  const failedBefore = gh.fake.requests.length;
  await until(
    "the landing to hit the outage",
    () => Promise.resolve(gh.fake.requests.length >= failedBefore + 3),
  );
  gh.fake.setCheck(await gh.fake.headOf(1), {
    name: "ci/test",
    status: "completed",
    conclusion: "success",
  });
  const rows = await rowsOf(dir.path, run.runId);
  assert.equal(ofType(rows, "task_failed").length, 0);
  assert.equal(ofType(rows, "task_retried").length, 0);
  gh.fake.setDown(false);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gh.fake.pulls()[0].merged, true);
  assert.ok(run.lines.some((l) => /HTTP 502/.test(l)), "the terminal said the host failed");
  // A back-off names the latest time of the next try (a look or a webhook may bring it sooner).
  assert.ok(
    run.lines.some((l) => /HTTP 502.*(trying again|next look) within \d+ s/.test(l)),
    run.lines.join("\n"),
  );
});

Deno.test("under review.require_approval the pull request opens at once and the board's merge merges it", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report"]],
  }], { requiredChecks: ["ci/test"], extra: "review:\n  require_approval: true\n" });
  const run = watchedRun(dir.path);
  await until("the task waits for review", async () =>
    run.runId !== "" &&
    ofType(await rowsOf(dir.path, run.runId).catch(() => [] as Row[]), "task_completed")
        .length > 0);
  await waitsFor(dir.path, run, /^is ready; waits for the merge decision on the board$/);
  assert.equal(gh.fake.pulls().length, 1, "opened while the operator decides");
  assert.equal(gh.fake.pulls()[0].merged, false, "not merged before the operator decides");
  const res = await fetch(
    `${run.url}/dashboard/review-board/runs/${run.runId}/tasks/feature/review`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ decision: "merge" }),
    },
  );
  assert.equal(res.status, 200, await res.text());
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gh.fake.pulls()[0].merged, true);
  assert.deepEqual(await gh.fake.refusedPushes(), []);
});

Deno.test("two pull requests that conflict: the second is sent to a new attempt from the new base, which lands", async () => {
  await using dir = await tempDir();
  const edit = (line: string) => [
    ["first_attempt", [["append", "shared.txt", `${line}\n`], ["report"]]],
    ["retry", [["require_prompt", "shared.txt"], ["append", "shared.txt", `${line}\n`], [
      "report",
    ]]],
  ];
  await using gh = await landingWorkspace(dir.path, [
    { id: "one", script: edit("one") },
    { id: "two", script: edit("two") },
  ], { requiredChecks: ["ci/test"] });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const conflict = ofType(rows, "merge_conflict");
  assert.equal(conflict.length, 1, "one of them conflicted with the other's merge");
  assert.deepEqual(conflict[0].data.files, ["shared.txt"]);
  const lines = (await sh(gh.fake.bare, "show", "main:shared.txt")).trim().split("\n").sort();
  assert.deepEqual(lines, ["one", "two"], "both landed on main");
  assert.equal(gh.fake.pulls().filter((p) => p.merged).length, 2);
  assert.deepEqual(await gh.fake.refusedPushes(), []);
});

Deno.test("on_ci_failure: fail — a failed required check FAILS the task with the check's name; its pull request is closed", async () => {
  await using dir = await tempDir();
  await using gh = await landingWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "broken\n"], ["report"]],
  }], {
    requiredChecks: ["ci/test"],
    landing: "  on_ci_failure: fail\n",
    ci: () => [{
      name: "ci/test",
      status: "completed",
      conclusion: "failure",
      summary: "1 test failed",
    }],
  });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "failed");
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  assert.match(
    String(ofType(rows, "task_failed")[0].data.reason),
    /required check `ci\/test` failed/,
  );
  assert.equal(ofType(rows, "task_claimed").length, 1, "no new attempt");
  assert.deepEqual(gh.fake.pulls().map((p) => [p.state, p.merged]), [["closed", false]]);
  assert.equal(ofType(rows, "task_pr_closed").length, 1);
});
