/**
 * Landing through GitLab merge requests, end to end (DESIGN.md §12): the workspace's `origin` is
 * the fake GitLab's bare repository (pushes to `main` refused), the scripted agent, the real run
 * loop. Work reaches `main` only by the fake's merge, or its merge train's.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { journalOf, rowsOf, sh, type Step, until, watchedRun, withEnv, workspace } from "./_e2e.ts";
import { type FakeGitlabOptions, startFakeGitlab } from "./fakes/gitlab_api.ts";
import { tempDir } from "./helpers.ts";

type Row = Awaited<ReturnType<typeof rowsOf>>[number];

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

async function waitsFor(dir: string, run: { runId: string }, words: RegExp) {
  await until(`a merge request that ${words}`, async () =>
    run.runId !== "" &&
    (await rowsOf(dir, run.runId).catch(() => [] as Row[])).some((r) =>
      r.type === "task_pr_status" && words.test(String(r.data.waits_for ?? ""))
    ));
}

const FEATURE: Step[] = [{
  id: "feature",
  script: [["write", "feature.txt", "done\n"], ["report", "wrote feature.txt"]],
}];

Deno.test("GitLab: a merge request waits for its required pipeline and an approval, then GitLab merges it", async () => {
  await using dir = await tempDir();
  await using gl = await gitlabWorkspace(dir.path, FEATURE, {
    pipelineMustSucceed: true,
    approvals: 1,
    pipeline: () => "running",
  });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /^waits for required check `pipeline`$/);
  gl.fake.setPipeline(await gl.fake.headOf(1), "success");
  await waitsFor(dir.path, run, /^waits for 1 approving review$/);
  gl.fake.approve(1, "bob");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const opened = rows.find((r) => r.type === "task_pr_opened")!;
  assert.match(String(opened.data.url), /\/-\/merge_requests\/1$/);
  const merged = rows.find((r) => r.type === "task_merged")!;
  assert.equal(merged.data.commit, (await sh(gl.fake.bare, "rev-parse", "main")).trim());
  assert.equal(merged.data.pr, opened.data.url);
  assert.equal(await sh(gl.fake.bare, "show", "main:feature.txt"), "done\n");
  assert.deepEqual(await gl.fake.refusedPushes(), []);
});

Deno.test("GitLab: with merge trains enabled the merge request goes on the train, which merges it", async () => {
  await using dir = await tempDir();
  await using gl = await gitlabWorkspace(dir.path, FEATURE, {
    pipelineMustSucceed: true,
    mergeTrains: true,
  });
  const run = watchedRun(dir.path);
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  assert.ok(
    rows.some((r) => r.type === "task_pr_updated" && r.data.reason === "added to the merge train"),
    "it was put on the train",
  );
  assert.equal(gl.fake.mergeRequests()[0].state, "merged");
  assert.equal(
    rows.find((r) => r.type === "task_merged")!.data.commit,
    (await sh(gl.fake.bare, "rev-parse", "main")).trim(),
  );
});

Deno.test("GitLab: a merge request a person closes cancels its task with their reason", async () => {
  await using dir = await tempDir();
  await using gl = await gitlabWorkspace(dir.path, FEATURE, { approvals: 1 });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /approving review/);
  gl.fake.closeByPerson(1, "carol", "Duplicate of !7.");
  await run.result;
  const rows = (await journalOf(dir.path, run.runId)).rows.map((r) => r.row);
  const cancelled = rows.find((r) => r.type === "task_cancelled")!;
  assert.match(
    String(cancelled.data.reason),
    /merge request !1 was closed by carol without merging: "Duplicate of !7\."/,
  );
  assert.equal(rows.filter((r) => r.type === "task_merged").length, 0);
});

Deno.test("GitLab: a reviewer's requested changes send the task to a new attempt told their comment", async () => {
  await using dir = await tempDir();
  await using gl = await gitlabWorkspace(dir.path, [{
    id: "feature",
    script: [
      ["first_attempt", [["write", "feature.txt", "v1\n"], ["report"]]],
      ["retry", [["require_prompt", "Use v2 please."], ["write", "feature.txt", "v2\n"], [
        "report",
      ]]],
    ],
  }], { approvals: 1 });
  const run = watchedRun(dir.path);
  await waitsFor(dir.path, run, /approving review/);
  gl.fake.requestChanges(1, "dana", "Use v2 please.");
  await until(
    "the new attempt's merge request",
    () => Promise.resolve(gl.fake.mergeRequests().length === 2),
  );
  gl.fake.approve(2, "dana");
  const result = await run.result;
  assert.equal(result.status, "completed", result.problems.join("; "));
  assert.equal(await sh(gl.fake.bare, "show", "main:feature.txt"), "v2\n");
  assert.deepEqual(gl.fake.mergeRequests().map((m) => m.state), ["closed", "merged"]);
});
