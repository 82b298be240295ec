/**
 * Pull requests as a team runs them every day (issue 35): no pull request for work that changes
 * nothing, and no rebase (with its CI run) unless the base requires up-to-date branches or the
 * work conflicts. A real workspace whose `origin` is the host stand-in's bare repository (pushes
 * to `main` refused), the scripted agent, the real run loop.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
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
import { type FakeGitlabOptions, startFakeGitlab } from "./fakes/gitlab_api.ts";
import { tempDir } from "./helpers.ts";

type Row = Awaited<ReturnType<typeof rowsOf>>[number];

/** A workspace landing through the GitHub stand-in. */
async function githubWorkspace(dir: string, steps: Step[], options: FakeGithubOptions = {}) {
  await workspace(dir, [{ name: "s", steps }]);
  const fake = await startFakeGithub(dir, options);
  await sh(dir, "remote", "add", "origin", fake.bare);
  const tokenEnv = `FAKE_GH_TOKEN_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `landing:\n  mode: pull_request\n  provider: github\n  api_url: ${fake.url}\n` +
      `  repo: acme/widget\n  token_env: ${tokenEnv}\n  poll_interval_s: 1\n`,
    { append: true },
  );
  const env = withEnv({ [tokenEnv]: "gh-token" });
  return {
    fake,
    tokenEnv,
    async [Symbol.asyncDispose]() {
      env[Symbol.dispose]();
      await fake[Symbol.asyncDispose]();
    },
  };
}

/** A workspace landing through the GitLab stand-in. */
async function gitlabWorkspace(dir: string, steps: Step[], options: FakeGitlabOptions = {}) {
  await workspace(dir, [{ name: "s", steps }]);
  const fake = await startFakeGitlab(dir, options);
  await sh(dir, "remote", "add", "origin", fake.bare);
  const tokenEnv = `FAKE_GL_TOKEN_${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
  await Deno.writeTextFile(
    join(dir, "service.yaml"),
    `landing:\n  mode: pull_request\n  provider: gitlab\n  api_url: ${fake.url}\n` +
      `  repo: acme/widget\n  token_env: ${tokenEnv}\n  method: merge\n  poll_interval_s: 1\n`,
    { append: true },
  );
  const env = withEnv({ [tokenEnv]: "glpat-token" });
  return {
    fake,
    async [Symbol.asyncDispose]() {
      env[Symbol.dispose]();
      await fake[Symbol.asyncDispose]();
    },
  };
}

const TWO: Step[] = [
  { id: "a", script: [["write", "a.txt", "a\n"], ["report"]] },
  { id: "b", script: [["write", "b.txt", "b\n"], ["report"]] },
];

/** Until the run has journaled `n` pull-request waits matching `words`. */
async function waiting(dir: string, run: { runId: string }, words: RegExp, n: number) {
  await until(`${n} pull requests that ${words}`, async () =>
    run.runId !== "" &&
    new Set(
        (await rowsOf(dir, run.runId).catch(() => [] as Row[])).filter((r) =>
          r.type === "task_pr_status" && words.test(String(r.data.waits_for ?? ""))
        ).map((r) => r.data.task_id),
      ).size >= n);
}

function rebasedRows(rows: Row[]): Row[] {
  return rows.filter((r) =>
    (r.type === "task_pr_updated" && /rebased/.test(String(r.data.reason))) ||
    r.type === "task_rebased"
  );
}

Deno.test("the GitHub stand-in answers 422 'No commits between' for a head its base already holds, as GitHub does", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, TWO);
  await sh(dir.path, "push", "-q", gh.fake.bare, "HEAD:refs/heads/agent/empty");
  const r = await fetch(`${gh.fake.url}/repos/acme/widget/pulls`, {
    method: "POST",
    headers: { authorization: "Bearer gh-token", "content-type": "application/json" },
    body: JSON.stringify({ title: "t", head: "agent/empty", base: "main", body: "" }),
  });
  assert.equal(r.status, 422);
  const body = await r.json();
  assert.equal(body.errors[0].message, "No commits between main and agent/empty");
  assert.equal(gh.fake.pulls().length, 0);
});

Deno.test("an agent that changed nothing gets no pull request: the task lands as it is, and a red check on main's tip fails no attempt", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, [
    { id: "noop", script: [["report", "nothing needed changing"]] },
  ], { requiredChecks: ["ci/test"] });
  const mainTip = (await sh(gh.fake.bare, "rev-parse", "main")).trim();
  // main's own tip is red (a flaky nightly): a pull request whose head is that tip could never merge.
  gh.fake.setStatus(mainTip, { context: "ci/test", state: "failure", description: "flaky" });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gh.fake.pulls().length, 0, "no pull request was opened");
  assert.ok(!gh.fake.requests.includes("POST /repos/acme/widget/pulls"), "none was even asked for");
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const merged = rows.filter((r) => r.type === "task_merged");
  assert.equal(merged.length, 1);
  assert.equal(merged[0].data.empty, true);
  assert.equal(merged[0].data.commit, mainTip, "main is where it was");
  assert.equal(merged[0].data.pr, undefined);
  assert.equal(rows.filter((r) => r.type === "task_claimed").length, 1, "one attempt");
  assert.equal((await sh(gh.fake.bare, "rev-parse", "main")).trim(), mainTip, "main never moved");
  assert.ok(
    run.lines.some((l) => /noop: nothing to land: its work changes nothing on the base/.test(l)),
    run.lines.join("\n"),
  );
});

Deno.test("GitHub without strict status checks: a pull request whose base moved is not rebased; GitHub merges it as it is, one CI run per pull request", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, TWO, {
    approvals: 1,
    requiredChecks: ["ci/test"],
  });
  const run = watchedRun(dir.path);
  await waiting(dir.path, run, /approving review/, 2);
  const [first, other] = gh.fake.pulls();
  const before = await gh.fake.headOf(other.number);
  await gh.fake.review(first.number, "alice", "APPROVED");
  await until("the first pull request merged", () => Promise.resolve(gh.fake.pulls()[0].merged));
  await gh.fake.review(other.number, "alice", "APPROVED");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.ok(gh.fake.pulls().every((p) => p.merged));
  assert.equal(await gh.fake.headOf(other.number), before, "merged at the head first pushed");
  const rows = await rowsOf(dir.path, run.runId);
  assert.deepEqual(rebasedRows(rows).map((r) => r.data), [], "nothing was rebased");
  const heads = gh.fake.events.filter((e) => e.kind === "head");
  assert.equal(heads.length, 2, "CI ran once per pull request");
  assert.deepEqual(await gh.fake.refusedPushes(), []);
});

Deno.test("GitHub with strict status checks the token cannot read: GitHub's 'not up to date' answer brings the rebase, and the pull request merges", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, TWO, {
    approvals: 1,
    strict: true,
    hideProtection: true,
  });
  const run = watchedRun(dir.path);
  await until("two pull requests", () => Promise.resolve(gh.fake.pulls().length === 2));
  const [first, other] = gh.fake.pulls();
  const before = await gh.fake.headOf(other.number);
  await gh.fake.review(first.number, "alice", "APPROVED");
  await until("the first pull request merged", () => Promise.resolve(gh.fake.pulls()[0].merged));
  await gh.fake.review(other.number, "alice", "APPROVED");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.ok(gh.fake.pulls().every((p) => p.merged));
  assert.notEqual(await gh.fake.headOf(other.number), before, "rebased before it merged");
  const rows = await rowsOf(dir.path, run.runId);
  assert.ok(
    rows.some((r) =>
      r.type === "task_pr_updated" && r.data.number === other.number &&
      /^rebased onto main/.test(String(r.data.reason))
    ),
  );
});

Deno.test("GitLab under the merge-commit method: a merge request whose target moved is not rebased; GitLab merges it as it is", async () => {
  await using dir = await tempDir();
  await using gl = await gitlabWorkspace(dir.path, TWO, { approvals: 1 });
  const run = watchedRun(dir.path);
  await waiting(dir.path, run, /approving review/, 2);
  const [first, other] = gl.fake.mergeRequests();
  const before = await gl.fake.headOf(other.iid);
  gl.fake.approve(first.iid, "alice");
  await until(
    "the first merge request merged",
    () => Promise.resolve(gl.fake.mergeRequests()[0].state === "merged"),
  );
  gl.fake.approve(other.iid, "alice");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.ok(gl.fake.mergeRequests().every((m) => m.state === "merged"));
  assert.equal(await gl.fake.headOf(other.iid), before);
  assert.deepEqual(rebasedRows(await rowsOf(dir.path, run.runId)).map((r) => r.data), []);
});

Deno.test("GitLab under fast-forward merges: a merge request whose target moved is rebased onto it, then merges", async () => {
  await using dir = await tempDir();
  await using gl = await gitlabWorkspace(dir.path, TWO, { approvals: 1, mergeMethod: "ff" });
  const run = watchedRun(dir.path);
  await waiting(dir.path, run, /approving review/, 2);
  const [first, other] = gl.fake.mergeRequests();
  gl.fake.approve(first.iid, "alice");
  gl.fake.approve(other.iid, "alice");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.ok(gl.fake.mergeRequests().every((m) => m.state === "merged"));
  const rows = await rowsOf(dir.path, run.runId);
  assert.ok(
    rows.some((r) =>
      r.type === "task_pr_updated" && /^rebased onto main/.test(String(r.data.reason))
    ),
    "the second was rebased onto the first",
  );
  // Fast-forward: main's history is the two agents' commits, no merge commit.
  const parents = (await sh(gl.fake.bare, "log", "--format=%p", "main")).trim().split("\n");
  assert.ok(parents.every((p) => !p.includes(" ")), "no merge commit on main");
});

Deno.test("a pull request a person closed: `service run` ends saying who cancelled the task and why, not that an operator settled it", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, [
    { id: "feature", script: [["write", "f.txt", "f\n"], ["report"]] },
  ], { approvals: 1 });
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", dir.path, "run", "--port", "0"],
    env: { NO_COLOR: "1", [gh.tokenEnv]: "gh-token" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  await until("the pull request", () => Promise.resolve(gh.fake.pulls().length === 1));
  await gh.fake.closeByPerson(1, "alice", "We do not need this any more.");
  const done = await output;
  const text = new TextDecoder().decode(done.stdout);
  assert.equal(done.code, 0, text);
  assert.match(
    text,
    /completed; every task landed except:\n {2}feature: CANCELLED — pull request #1 was closed by alice without merging: "We do not need this any more\."/,
  );
  assert.doesNotMatch(text, /settled by an operator/);
});

Deno.test("a required check that fails once (flaky) is re-run through GitHub before any new attempt: it passes, the pull request merges, no attempt counted", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, [
    { id: "feature", script: [["write", "f.txt", "f\n"], ["report"]] },
  ], {
    requiredChecks: ["ci/test"],
    ci: () => [{
      name: "ci/test",
      status: "completed",
      conclusion: "failure",
      summary: "runner lost its connection",
      app: "github-actions",
    }],
    rerun: () => ({ name: "ci/test", status: "completed", conclusion: "success" }),
  });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gh.fake.pulls()[0].merged, true);
  const rows = await rowsOf(dir.path, run.runId);
  const reruns = rows.filter((r) => r.type === "task_pr_check_rerun");
  assert.equal(reruns.length, 1);
  assert.equal(reruns[0].data.check, "ci/test");
  assert.equal(reruns[0].data.rerun, 1);
  assert.equal(reruns[0].data.summary, "ci/test");
  assert.equal(rows.filter((r) => r.type === "task_claimed").length, 1, "one attempt");
  assert.equal(rows.filter((r) => r.type === "task_retried").length, 0);
  assert.ok(
    gh.fake.requests.some((r) => /^POST \/repos\/acme\/widget\/actions\/jobs\/\d+\/rerun$/.test(r)),
    "an Actions check is re-run through the Actions API",
  );
  assert.ok(
    rows.some((r) =>
      r.type === "task_pr_status" &&
      /^waits for the re-run of required check `ci\/test` \(1 of 1\)/.test(String(r.data.waits_for))
    ),
    "status and the board say what it waits for",
  );
});

Deno.test("a required check that fails again after its re-run: a new attempt, told the check's name; an app's check is rerequested", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, [{
    id: "feature",
    script: [
      ["first_attempt", [["write", "broken.txt", "x\n"], ["report"]]],
      ["retry", [["require_prompt", "ci/test"], ["write", "fixed.txt", "y\n"], ["report"]]],
    ],
  }], {
    requiredChecks: ["ci/test"],
    ci: (_sha, files) => [{
      name: "ci/test",
      status: "completed",
      conclusion: files.includes("broken.txt") ? "failure" : "success",
      summary: "1 test failed",
    }],
  });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = await rowsOf(dir.path, run.runId);
  assert.equal(rows.filter((r) => r.type === "task_pr_check_rerun").length, 1, "re-run once");
  assert.ok(
    gh.fake.requests.some((r) =>
      /^POST \/repos\/acme\/widget\/check-runs\/\d+\/rerequest$/.test(r)
    ),
    "an app's check run is rerequested",
  );
  const retried = rows.filter((r) => r.type === "task_retried");
  assert.equal(retried.length, 1, "then a new attempt");
  assert.match(String(retried[0].data.reason), /required check `ci\/test` failed/);
  assert.equal(rows.filter((r) => r.type === "task_claimed").length, 2);
  assert.equal(gh.fake.pulls().filter((p) => p.merged).length, 1);
});

Deno.test("GitLab: a failed pipeline is retried once before a new attempt; it passes and GitLab merges", async () => {
  await using dir = await tempDir();
  await using gl = await gitlabWorkspace(dir.path, [
    { id: "feature", script: [["write", "f.txt", "f\n"], ["report"]] },
  ], { pipelineMustSucceed: true, pipeline: () => "failed", retry: () => "success" });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(gl.fake.mergeRequests()[0].state, "merged");
  const rows = await rowsOf(dir.path, run.runId);
  assert.equal(rows.filter((r) => r.type === "task_pr_check_rerun").length, 1);
  assert.equal(rows.filter((r) => r.type === "task_claimed").length, 1, "one attempt");
  assert.ok(gl.fake.events.some((e) => e.kind === "rerun"));
});

Deno.test("a merge GitHub keeps refusing (a review rule the token cannot read) is asked again less and less often, not at every poll interval, and merges once approved", async () => {
  await using dir = await tempDir();
  await using gh = await githubWorkspace(dir.path, [{
    id: "feature",
    script: [["write", "feature.txt", "done\n"], ["report", "wrote feature.txt"]],
  }], { approvals: 1, hideProtection: true });
  const run = watchedRun(dir.path);
  const asks = () => gh.fake.events.filter((e) => e.kind === "merge_requested");
  await until("five refused merges", () => Promise.resolve(asks().length >= 5), 120_000);
  const [first, , , , fifth] = asks();
  // Every poll interval (1 s) would ask five times within ~4 s; backing off (1, 2, 4, 8 s) takes 15.
  assert.ok(
    fifth.at - first.at >= 12_000,
    `five merge requests within ${fifth.at - first.at} ms: the refusal is asked again at once`,
  );
  const rows = await rowsOf(dir.path, run.runId);
  assert.ok(rows.some((r) =>
    r.type === "task_waiting" &&
    /GitHub did not merge it \(HTTP 405: At least 1 approving review .*\); asking again within \d+ s/
      .test(String(r.data.reason))
  ));
  await gh.fake.review(1, "alice", "APPROVED");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.ok(gh.fake.pulls()[0].merged);
});
