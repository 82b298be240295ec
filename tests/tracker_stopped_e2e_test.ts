/**
 * A solo user's continuous tracker run, stopped and resumed (issue 35): a `service stop` counts
 * no attempt, as in plan runs, and tickets that arrive while the run is stopped (kept by
 * `service serve`) start on resume like any new task — no lost agent, no 409 on its completion.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, CLI, cli, sh, until } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { signBody } from "../lib/webhooks/signature.ts";

const script = (...directives: unknown[][]) =>
  "```agent-script\n" + directives.map((d) => JSON.stringify(d)).join("\n") + "\n```";

/** `service serve` as a child process on a free port; its URL once it listens. */
async function serveProcess(root: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "serve", "--port", "0"],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const decoder = new TextDecoder();
  const read = async (s: ReadableStream<Uint8Array>) => {
    for await (const b of s) text += decoder.decode(b, { stream: true });
  };
  const reading = Promise.all([read(child.stdout), read(child.stderr)]);
  const url = /http:\/\/127\.0\.0\.1:\d+/;
  await until("serve listens", () => Promise.resolve(url.test(text)), 30_000);
  return {
    url: url.exec(text)![0],
    async stop() {
      child.kill("SIGTERM");
      await child.status;
      await reading;
    },
  };
}

/** A workspace whose continuous run takes GitHub issue deliveries (no polling). */
async function trackerWorkspace(root: string, secretVar: string) {
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "t@localhost");
  await sh(root, "config", "user.name", "t");
  await Deno.writeTextFile(join(root, "README.md"), "# tracker run\n");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      `roles:\n  backend: {}\ntrackers:\n  tracker_b:\n    project: octo/app\n    polling: false\n` +
      `    webhook: { enabled: true, secret_env: ${secretVar} }\n`,
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
}

/** Deliver a signed `issues` `opened` event for ticket `number` whose body is `body`. */
async function deliver(url: string, secret: string, number: number, body: string) {
  const payload = JSON.parse(
    await Deno.readTextFile(
      new URL("./fixtures/trackers/github_issues_opened.json", import.meta.url),
    ),
  );
  payload.repository.full_name = "octo/app";
  payload.issue.number = number;
  payload.issue.title = `Ticket ${number}`;
  payload.issue.body = body;
  payload.issue.updated_at = new Date().toISOString();
  const text = JSON.stringify(payload);
  const res = await fetch(`${url}/webhooks/trackers/tracker_b`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "X-GitHub-Event": "issues",
      "X-Hub-Signature-256": signBody("hub-sha256", secret, text),
      "X-Tracker-B-Delivery": `delivery-${number}-${crypto.randomUUID()}`,
    },
    body: text,
  });
  const answer = await res.json();
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer;
}

/** The run's journal rows about `taskId`. */
async function rowsAbout(root: string, runId: string, taskId: string) {
  return (await Deno.readTextFile(join(root, ".sdd/runs", runId, "journal.jsonl")))
    .trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.data.task_id === taskId);
}

/** True once the run journaled `taskId`'s merge. */
async function merged(root: string, runId: string, taskId: string): Promise<boolean> {
  return (await rowsAbout(root, runId, taskId)).some((r) => r.type === "task_merged");
}

/** Start the continuous run, detached; its state file. */
async function startRun(root: string) {
  const started = await cli(root, "run", "--detach", "--port", "0");
  assert.equal(started.code, 0, started.out);
  return JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
}

/** True once an agent's worktree exists. */
async function agentWorks(root: string): Promise<boolean> {
  const dir = join(root, ".sdd/worktrees");
  return (await Array.fromAsync(Deno.readDir(dir)).catch(() => [])).length > 0;
}

const MAIN_ATTEMPTS = ["task_claimed", "task_verification_failed", "task_retried", "task_merged"];

Deno.test("service stop counts no attempt of a continuous tracker run's task, as in plan runs", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const secretVar = `WH_STOP_COUNT_${Deno.pid}`;
  using _env = envVar(secretVar, "stop-secret");
  await trackerWorkspace(root, secretVar);
  try {
    const state = await startRun(root);
    // The first agent works until it is stopped; the resumed one finishes.
    const mark = join(dir.path, "first-agent-started");
    const slow = script(
      ["if_missing", mark, [["run", `touch ${mark}`], ["sleep", 60000]]],
      ["write", "one.txt", "1\n"],
      ["report", "one"],
    );
    await deliver(state.url, "stop-secret", 1, slow);
    await until("ticket 1's agent works", () => agentWorks(root), 60_000);
    assert.equal((await cli(root, "stop")).code, 0);
    await startRun(root);
    await until("ticket 1 lands", () => merged(root, state.run_id, "tracker_b-octo-app-1"), 90_000);
    const rows = await rowsAbout(root, state.run_id, "tracker_b-octo-app-1");
    const log = await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.log"));
    assert.doesNotMatch(log, /failed attempt/, "no attempt was counted");
    assert.equal(rows.filter((r) => r.type === "task_verification_failed").length, 0, log);
    assert.match(
      rows.find((r) => r.type === "task_retried")?.data.reason ?? "",
      /the run stopped; `service run` resumes it/,
    );
  } finally {
    await cli(root, "stop");
  }
});

Deno.test("a ticket delivered to service serve while the run was stopped starts on resume as a fresh task", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const secretVar = `WH_STOPPED_${Deno.pid}`;
  using _env = envVar(secretVar, "stopped-secret");
  await trackerWorkspace(root, secretVar);
  try {
    // A continuous run takes ticket 1 and is stopped while its agent works.
    const state = await startRun(root);
    await deliver(state.url, "stopped-secret", 1, script(["sleep", 60000], ["report"]));
    await until("ticket 1's agent works", () => agentWorks(root), 60_000);
    assert.equal((await cli(root, "stop")).code, 0);
    // While stopped, `service serve` keeps the webhook open: ticket 2 arrives.
    const serve = await serveProcess(root);
    const two = script(["write", "two.txt", "2\n"], ["report", "two"]);
    const answer = await deliver(serve.url, "stopped-secret", 2, two);
    await serve.stop();
    assert.equal(answer.tickets[0].action, "created");
    // The run resumes: ticket 2 starts as a fresh task and lands at its first attempt.
    await startRun(root);
    await until("ticket 2 lands", () => merged(root, state.run_id, "tracker_b-octo-app-2"), 90_000);
    const log = await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.log"));
    const rows = await rowsAbout(root, state.run_id, "tracker_b-octo-app-2");
    assert.deepEqual(
      rows.filter((r) => MAIN_ATTEMPTS.includes(r.type)).map((r) => r.type),
      ["task_claimed", "task_merged"],
      log,
    );
    assert.equal(rows.find((r) => r.type === "task_claimed").data.attempt, 1);
    assert.doesNotMatch(log, /tracker_b-octo-app-2: .*(agent was lost|invalid_transition)/);
  } finally {
    await cli(root, "stop");
  }
});

/** Set an environment variable until disposed. */
function envVar(name: string, value: string): Disposable {
  Deno.env.set(name, value);
  return { [Symbol.dispose]: () => Deno.env.delete(name) };
}
