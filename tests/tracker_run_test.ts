/**
 * `service run` without a plan, trackers configured: the real CLI runs continuously, takes a
 * ticket from a poll and another from a signed webhook delivery, lands both with the scripted
 * agent, comments on each ticket (comment_on_land) and ends on `service stop`. A signed delivery
 * about another repository's issue is ignored: no task, no goal run, no comment there.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, cli, sh, until } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { startFakeTrackerApis } from "./_tracker_apis.ts";
import { signBody } from "../lib/webhooks/signature.ts";
import { sha256Hex } from "../lib/journal/hash.ts";

const script = (file: string) =>
  "```agent-script\n" + JSON.stringify(["write", file, "done\n"]) + "\n" + '["report"]\n```';

Deno.test("service run (no plan) takes work from trackers until stopped; comments on landed tickets", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await using fake = startFakeTrackerApis([{
    number: 1,
    title: "Polled ticket",
    body: script("one.txt"),
    labels: [],
    state: "open",
    updated_at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  }]);
  const secretVar = `WH_RUN_${Deno.pid}`;
  const tokenVar = `TRK_RUN_TOKEN_${Deno.pid}`;
  Deno.env.set(secretVar, "run-secret");
  Deno.env.set(tokenVar, "gh-token");
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "t@localhost");
  await sh(root, "config", "user.name", "t");
  await Deno.writeTextFile(join(root, "README.md"), "# tracker run\n");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      `roles:\n  backend: {}\ntrackers:\n  tracker_b:\n    project: octo/app\n` +
      `    api_url: ${fake.url}\n    poll_interval_s: 0.2\n    token_env: ${tokenVar}\n` +
      `    comment_on_land: true\n    webhook: { enabled: true, secret_env: ${secretVar} }\n`,
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
  let stopped = false;
  try {
    const started = await cli(root, "run", "--detach", "--port", "0");
    assert.equal(started.code, 0, started.out);
    const exists = (f: string) => Deno.stat(join(root, f)).then(() => true, () => false);
    await until("the polled ticket lands", () => exists("one.txt"), 90_000);

    const state = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    assert.equal(state.status, "running");
    const payload = JSON.parse(
      await Deno.readTextFile(
        new URL("./fixtures/trackers/github_issues_opened.json", import.meta.url),
      ),
    );
    const send = async (repo: string, number: number, title: string, file: string) => {
      payload.repository.full_name = repo;
      payload.issue.number = number;
      payload.issue.title = title;
      payload.issue.body = script(file);
      const body = JSON.stringify(payload);
      const res = await fetch(`${state.url}/webhooks/trackers/tracker_b`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "X-GitHub-Event": "issues",
          "X-Hub-Signature-256": signBody("hub-sha256", "run-secret", body),
          "X-Tracker-B-Delivery": `run-delivery-${number}`,
        },
        body,
      });
      const answer = await res.json();
      assert.equal(res.status, 200, JSON.stringify(answer));
      return answer;
    };
    // Signed with the same secret, about another repository: ignored, nothing written.
    const foreign = await send("stranger/elsewhere", 3, "Foreign ticket", "three.txt");
    assert.equal(foreign.status, "ignored");
    assert.match(foreign.reason, /not in trackers\.tracker_b\.project \(octo\/app\)/);
    const answer = await send("octo/app", 2, "Delivered ticket", "two.txt");
    assert.equal(answer.tickets[0].action, "created");
    await until("the delivered ticket lands", () => exists("two.txt"), 90_000);
    await until("two comments", () => Promise.resolve(fake.comments.length >= 2), 30_000);
    const paths = fake.comments.map((c) => c.path).sort();
    assert.deepEqual(paths, [
      "/repos/octo/app/issues/1/comments",
      "/repos/octo/app/issues/2/comments",
    ]);
    for (const c of fake.comments) {
      assert.match(
        JSON.parse(c.body).body,
        /^Landed: task `tracker_b-octo-app-\d` was verified and merged in [0-9a-f]{40}\./,
      );
    }
    const auth = fake.requests.find((r) => r.path.endsWith("/comments"))!.headers.get(
      "authorization",
    );
    assert.equal(auth, "Bearer gh-token");

    const stop = await cli(root, "stop");
    stopped = true;
    assert.equal(stop.code, 0, stop.out);
    const after = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    assert.equal(after.status, "stopped");
    // Every ticket landed: nothing is left for `service run` to resume, and stop says so.
    assert.equal(after.unfinished, 0);
    assert.match(
      stop.out,
      /stopped with every task finished; the next `service run` starts a new run/,
    );
    const journal =
      (await Deno.readTextFile(join(root, ".sdd/runs", state.run_id, "journal.jsonl")))
        .trim().split("\n").map((l) => JSON.parse(l));
    const types = journal.map((r) => r.type);
    assert.equal(types[0], "run_started");
    assert.equal(journal[0].data.plan, "trackers and the task API (continuous)");
    assert.equal(
      journal[0].data.config_sha256,
      `sha256:${sha256Hex(await Deno.readFile(join(root, "service.yaml")))}`,
    );
    assert.equal(types.filter((t) => t === "task_merged").length, 2);
    // Adopted tasks belong to the run: one verification record per completion, after the gates.
    const backlog = JSON.parse(
      await Deno.readTextFile(join(root, ".sdd/runtime/task-backlog.json")),
    );
    for (const task of backlog.tasks) assert.equal(task.run_id, state.run_id, task.id);
    assert.equal(backlog.tasks.length, 2, "no task from the other repository");
    assert.equal(await exists("three.txt"), false, "the other repository's goal never ran");
    const ledger = (await Deno.readTextFile(join(root, ".sdd/metrics/verification_nudges.jsonl")))
      .trim().split("\n").map((l) => JSON.parse(l));
    assert.deepEqual(ledger.map((r) => r.task_id).sort(), [
      "tracker_b-octo-app-1",
      "tracker_b-octo-app-2",
    ]);
  } finally {
    if (!stopped) await cli(root, "stop");
    Deno.env.delete(secretVar);
    Deno.env.delete(tokenVar);
  }
});
