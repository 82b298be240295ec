/**
 * A ticket changed while its task is past its start, through a real continuous `service run`
 * (the CLI as a child process, its HTTP server, signed GitHub deliveries, and the GitHub stand-in
 * polled):
 *
 * - closed while its agent runs (a signed `issues` `closed` delivery): the agent is stopped,
 *   nothing merges, the journal says the ticket's closing cancelled it;
 * - closed while its verified work waits to land (seen by a poll): nothing merges either;
 * - edited after its task FAILED, by a delivery and by a poll: a new attempt with the new text,
 *   which lands.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, CLI, sh, until } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { startFakeTrackerApis } from "./_tracker_apis.ts";
import { signBody } from "../lib/webhooks/signature.ts";

const script = (...directives: unknown[][]) =>
  "```agent-script\n" + directives.map((d) => JSON.stringify(d)).join("\n") + "\n```";
const SECRET = "change-secret";
/** A time one second later than the last one given, as GitHub writes it. */
let clock = Date.now();
const later = () => new Date(clock += 1000).toISOString().replace(/\.\d+Z$/, "Z");

/** The CLI with the tracker's secret and token in its own environment (never this process's). */
async function cli(root: string, env: Record<string, string>, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, ...args],
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  return { code: out.code, out: text };
}

async function workspace(root: string, apiUrl: string, extra = "") {
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "t@localhost");
  await sh(root, "config", "user.name", "t");
  await Deno.writeTextFile(join(root, "README.md"), "# ticket changes\n");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      `roles:\n  backend: {}\ntrackers:\n  tracker_b:\n    project: octo/app\n` +
      `    api_url: ${apiUrl}\n    poll_interval_s: 0.2\n    token_env: TRK_CHANGE_TOKEN\n` +
      `    webhook: { enabled: true, secret_env: TRK_CHANGE_SECRET }\n${extra}`,
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
}

/** A signed GitHub `issues` delivery about octo/app#`number`. */
async function deliver(
  url: string,
  action: string,
  issue: { number: number; title: string; body: string; state: "open" | "closed" },
) {
  const payload = JSON.parse(
    await Deno.readTextFile(
      new URL("./fixtures/trackers/github_issues_opened.json", import.meta.url),
    ),
  );
  payload.action = action;
  payload.repository.full_name = "octo/app";
  payload.issue.labels = [];
  Object.assign(payload.issue, issue, { updated_at: later() });
  const body = JSON.stringify(payload);
  const res = await fetch(`${url}/webhooks/trackers/tracker_b`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "X-GitHub-Event": "issues",
      "X-Hub-Signature-256": signBody("hub-sha256", SECRET, body),
      "X-GitHub-Delivery": crypto.randomUUID(),
    },
    body,
  });
  const answer = await res.json();
  assert.equal(res.status, 200, JSON.stringify(answer));
  return answer;
}

/** The run's journal rows, and the store's view of a task. */
function readers(root: string) {
  const state = async () =>
    JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
  const rows = async () =>
    (await Deno.readTextFile(join(root, ".sdd/runs", (await state()).run_id, "journal.jsonl")))
      .trim().split("\n").map((l) => JSON.parse(l));
  const has = async (type: string, taskId: string) =>
    (await rows()).some((r) => r.type === type && r.data.task_id === taskId);
  const onMain = (file: string) =>
    sh(root, "cat-file", "-e", `main:${file}`).then(() => true, () => false);
  return { state, rows, has, onMain };
}

const ENV = { TRK_CHANGE_SECRET: SECRET, TRK_CHANGE_TOKEN: "gh-token" };

Deno.test("a ticket closed before its work lands cancels its task: the running agent is stopped, verified work waiting for review is not merged", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "repo");
  const signals = join(dir.path, "signals");
  await Deno.mkdir(root);
  await Deno.mkdir(signals);
  // The polled ticket's work is verified, then waits for an operator's merge.
  await using fake = startFakeTrackerApis([{
    number: 11,
    title: "Polled ticket",
    body: script(["write", "eleven.txt", "eleven\n"], ["report"]),
    labels: [],
    state: "open",
    updated_at: later(),
  }]);
  await workspace(root, fake.url, "review: { require_approval: true }\n");
  const { state, rows, has, onMain } = readers(root);
  const started = await cli(root, ENV, "run", "--detach", "--port", "0");
  assert.equal(started.code, 0, started.out);
  try {
    const { url } = await state();
    // An agent that runs until told (at most a minute), then writes its work.
    const waiting = join(signals, "release-10");
    const answer = await deliver(url, "opened", {
      number: 10,
      title: "Delivered ticket",
      body: script(
        ["write", join(signals, "started-10"), "\n"],
        [
          "run",
          `i=0; while [ ! -e ${waiting} ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done`,
        ],
        ["write", "ten.txt", "ten\n"],
        ["report"],
      ),
      state: "open",
    });
    assert.equal(answer.tickets[0].action, "created");
    const started10 = () => Deno.stat(join(signals, "started-10")).then(() => true, () => false);
    await until("the delivered ticket's agent runs", started10, 60_000);
    await until("the polled ticket's work waits for review", async () => {
      const review = (await rows()).some((r) =>
        r.type === "task_completed" && r.data.task_id === "tracker_b-octo-app-11"
      );
      return review;
    }, 60_000);

    // Closed by its author while the agent runs: a signed delivery.
    const closed = await deliver(url, "closed", {
      number: 10,
      title: "Delivered ticket",
      body: "",
      state: "closed",
    });
    assert.equal(closed.tickets[0].action, "cancelled", JSON.stringify(closed));
    // Closed while its work waits to land: seen by the next poll.
    Object.assign(fake.issues[0], { state: "closed", updated_at: later() });

    for (const id of ["tracker_b-octo-app-10", "tracker_b-octo-app-11"]) {
      await until(`${id} cancelled in the journal`, () => has("task_cancelled", id), 60_000);
    }
    await Deno.writeTextFile(waiting, ""); // were the agent alive, it would now write its work
    const journal = await rows();
    for (const n of [10, 11]) {
      const cancelled = journal.find((r) =>
        r.type === "task_cancelled" && r.data.task_id === `tracker_b-octo-app-${n}`
      );
      assert.equal(
        cancelled.data.reason,
        `cancelled: ticket octo/app#${n} was closed in tracker_b`,
      );
    }
    assert.equal(journal.some((r) => r.type === "task_merged"), false, "nothing merged");
    assert.equal(await onMain("ten.txt"), false);
    assert.equal(await onMain("eleven.txt"), false);
    const status = await cli(root, ENV, "status");
    assert.match(status.out, /ticket octo\/app#10 was closed in tracker_b/);
    // Closing it again changes nothing.
    const again = await deliver(url, "closed", {
      number: 10,
      title: "Delivered ticket",
      body: "",
      state: "closed",
    });
    assert.equal(again.tickets[0].action, "unchanged");
  } finally {
    const stop = await cli(root, ENV, "stop");
    assert.equal(stop.code, 0, stop.out);
  }
});

Deno.test("an edited ticket whose task FAILED gets a new attempt with the new text, from a delivery and from a poll", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "repo");
  await Deno.mkdir(root);
  await using fake = startFakeTrackerApis([{
    number: 21,
    title: "Polled ticket",
    body: script(["fail", "the goal is unclear"]),
    labels: [],
    state: "open",
    updated_at: later(),
  }]);
  await workspace(root, fake.url);
  const { state, has, onMain } = readers(root);
  const started = await cli(root, ENV, "run", "--detach", "--port", "0");
  assert.equal(started.code, 0, started.out);
  try {
    const { url } = await state();
    const created = await deliver(url, "opened", {
      number: 20,
      title: "Delivered ticket",
      body: script(["fail", "the goal is unclear"]),
      state: "open",
    });
    assert.equal(created.tickets[0].action, "created");
    for (const id of ["tracker_b-octo-app-20", "tracker_b-octo-app-21"]) {
      await until(`${id} failed`, () => has("task_failed", id), 60_000);
    }
    const edited = await deliver(url, "edited", {
      number: 20,
      title: "Delivered ticket",
      body: script(["write", "twenty.txt", "twenty\n"], ["report"]),
      state: "open",
    });
    assert.equal(edited.tickets[0].action, "retried", JSON.stringify(edited));
    Object.assign(fake.issues[0], {
      body: script(["write", "twenty-one.txt", "twenty-one\n"], ["report"]),
      updated_at: later(),
    });
    await until("the edited delivered ticket lands", () => onMain("twenty.txt"), 90_000);
    await until("the edited polled ticket lands", () => onMain("twenty-one.txt"), 90_000);
    for (const id of ["tracker_b-octo-app-20", "tracker_b-octo-app-21"]) {
      assert.ok(await has("task_retried", id), `${id}: task_retried journaled`);
    }
  } finally {
    const stop = await cli(root, ENV, "stop");
    assert.equal(stop.code, 0, stop.out);
  }
});

/** `service serve` as a child process on a free port, with `env`; its URL once it listens. */
async function serveProcess(root: string, env: Record<string, string>) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, "--root", root, "serve", "--port", "0"],
    env: { NO_COLOR: "1", ...env },
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
    async [Symbol.asyncDispose]() {
      child.kill("SIGTERM");
      await child.status;
      await reading;
    },
  };
}

Deno.test("a ticket closed while no run is live cancels its stopped run's unlanded work: the run's journal says so, and the next run does not land it", async () => {
  await using dir = await tempDir();
  const root = join(dir.path, "repo");
  await Deno.mkdir(root);
  await using fake = startFakeTrackerApis([]);
  await workspace(root, fake.url, "review: { require_approval: true }\n");
  const { state, rows, has, onMain } = readers(root);
  const started = await cli(root, ENV, "run", "--detach", "--port", "0");
  assert.equal(started.code, 0, started.out);
  const id = "tracker_b-octo-app-30";
  const ticket = {
    number: 30,
    title: "Waits for review",
    body: script(["write", "thirty.txt", "thirty\n"], ["report"]),
    state: "open" as const,
  };
  try {
    assert.equal(
      (await deliver((await state()).url, "opened", ticket)).tickets[0].action,
      "created",
    );
    await until("its work waits for review", () => has("task_completed", id), 60_000);
  } finally {
    const stop = await cli(root, ENV, "stop");
    assert.equal(stop.code, 0, stop.out);
  }
  const { run_id } = await state();
  {
    await using serve = await serveProcess(root, ENV);
    const closed = await deliver(serve.url, "closed", { ...ticket, state: "closed" });
    assert.equal(closed.tickets[0].action, "cancelled", JSON.stringify(closed));
    const cancelled = (await rows()).find((r) =>
      r.type === "task_cancelled" && r.data.task_id === id
    );
    assert.equal(cancelled?.data.reason, "cancelled: ticket octo/app#30 was closed in tracker_b");
  }
  // The next run has nothing of it to land.
  const again = await cli(root, ENV, "run", "--detach", "--port", "0");
  try {
    assert.equal(again.code, 0, again.out);
    const s = await state();
    assert.notEqual(s.run_id, run_id, "the stopped run has nothing left to resume");
  } finally {
    await cli(root, ENV, "stop");
  }
  assert.equal(await onMain("thirty.txt"), false);
});
