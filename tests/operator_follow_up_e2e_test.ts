/**
 * The board's operator actions with a real run (docs/board.md "New task and follow-ups"): a task
 * created on the board while no run runs is taken by the next `service run` (a continuous run,
 * as the board said); one created while that run lives is taken at once; its scripted agent
 * reads the follow-up the operator sends while it runs (`wait_follow_up`, through
 * `GET /tasks/<id>/messages` with its own credential, as its prompt says) and its work lands with
 * the follow-up's text. The follow-up is journaled and signed; one to a finished task is 409.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, cli, serveBoard, sh, until } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { sha256Hex } from "../lib/journal/hash.ts";

const script = (...directives: unknown[][]) =>
  "```agent-script\n" + directives.map((d) => JSON.stringify(d)).join("\n") + "\n```\n";

async function post(base: string, path: string, body: unknown) {
  const res = await fetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function taskStatus(base: string, id: string): Promise<string> {
  const res = await fetch(`${base}/tasks/${id}`);
  return (await res.json()).status;
}

Deno.test("a task created on the board runs, and its agent reads the operator's follow-up while it runs", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "t@localhost");
  await sh(root, "config", "user.name", "t");
  await Deno.writeTextFile(join(root, "README.md"), "# board tasks\n");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      "roles:\n  backend: {}\n",
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
  const exists = (f: string) => Deno.stat(join(root, f)).then(() => true, () => false);

  // No run: the board's server alone (`service serve`) takes the task and says who runs it.
  let first: string;
  {
    await using server = await serveBoard(root);
    const created = await post(server.url, "/dashboard/review-board/tasks", {
      title: "First",
      role: "backend",
      goal: script(["write", "first.txt", "first\n"], ["report", "first done"]),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(
      created.body.runs_it,
      "no run is running: `service run` (without a plan) takes it",
    );
    first = created.body.task.id;
  }

  let stopped = false;
  try {
    const started = await cli(root, "run", "--detach", "--port", "0");
    assert.equal(started.code, 0, started.out);
    await until("the board's first task lands", () => exists("first.txt"), 90_000);
    const state = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    assert.equal(state.plan, "trackers and the task API (continuous)");
    const base = state.url as string;

    const created = await post(base, "/dashboard/review-board/tasks", {
      title: "Second",
      role: "backend",
      goal: script(
        ["require_prompt", "/tasks/$SERVICE_TASK_ID/messages"],
        ["wait_follow_up", "follow.txt"],
        ["report", "follow-up applied"],
      ),
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.runs_it, `the running run ${state.run_id} takes it now`);
    const second = created.body.task.id as string;

    const late = await post(base, `/dashboard/review-board/tasks/${first}/follow-up`, {
      text: "too late",
    });
    assert.equal(late.status, 409, JSON.stringify(late.body));
    assert.equal(late.body.error.code, "task_not_running");

    await until("the second task's agent runs", async () => {
      return ["CLAIMED", "IN_PROGRESS"].includes(await taskStatus(base, second));
    }, 90_000);
    const sent = await post(base, `/dashboard/review-board/tasks/${second}/follow-up`, {
      text: "use the v2 API",
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    await until("the follow-up's work lands", () => exists("follow.txt"), 90_000);
    assert.equal(await Deno.readTextFile(join(root, "follow.txt")), "use the v2 API\n");

    const journal =
      (await Deno.readTextFile(join(root, ".sdd/runs", state.run_id, "journal.jsonl")))
        .trim().split("\n").map((l) => JSON.parse(l));
    const row = journal.find((r) => r.type === "task_follow_up");
    assert.deepEqual(
      [row.data.task_id, row.data.text, row.data.principal, row.data.audit_event_hash],
      [second, "use the v2 API", "dashboard-operator", sent.body.audit_event_hash],
    );
    const audit = (await Deno.readTextFile(join(root, ".sdd/audit/audit.jsonl"))).trim()
      .split("\n");
    const signed = audit.find((l) => sha256Hex(l) === sent.body.audit_event_hash)!;
    assert.equal(JSON.parse(signed).event, "board.follow_up");
    const detail = await (await fetch(
      `${base}/review-board/runs/${state.run_id}/tasks/${second}`,
    )).json();
    assert.deepEqual(detail.task.follow_ups.map((f: { text: string }) => f.text), [
      "use the v2 API",
    ]);

    const stop = await cli(root, "stop");
    stopped = true;
    assert.equal(stop.code, 0, stop.out);
  } finally {
    if (!stopped) await cli(root, "stop");
  }
});
