/**
 * A real continuous `service run` from a polled GitHub ticket, with `move_to`: the ticket gets
 * the "in progress" label when the agent's task is claimed, and is closed as completed (the
 * label removed) when the work merges — the stand-in records each change in order, and the run's
 * journal holds a `task_ticket_moved` row for each.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT, cli, sh, until } from "./_e2e.ts";
import { tempDir } from "./helpers.ts";
import { startFakeTrackerApis } from "./_tracker_apis.ts";

Deno.test("service run moves the ticket: in progress when claimed, closed as completed when merged", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  await using fake = startFakeTrackerApis([{
    number: 5,
    title: "Polled ticket",
    body: "```agent-script\n" + JSON.stringify(["write", "five.txt", "done\n"]) +
      '\n["report"]\n```',
    labels: ["agent"],
    state: "open",
    updated_at: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
  }]);
  const tokenVar = `TRK_MOVE_RUN_${Deno.pid}`;
  Deno.env.set(tokenVar, "gh-token");
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "t@localhost");
  await sh(root, "config", "user.name", "t");
  await Deno.writeTextFile(join(root, "README.md"), "# tracker moves\n");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      `roles:\n  backend: {}\ntrackers:\n  tracker_b:\n    project: octo/app\n` +
      `    api_url: ${fake.url}\n    poll_interval_s: 0.2\n    token_env: ${tokenVar}\n` +
      `    move_to: { claimed: In Progress, landed: closed }\n`,
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
  let stopped = false;
  try {
    const started = await cli(root, "run", "--detach", "--port", "0");
    assert.equal(started.code, 0, started.out);
    await until(
      "the ticket is closed",
      () => Promise.resolve(fake.issues[0].state === "closed"),
      90_000,
    );
    assert.deepEqual(fake.moves.map((m) => m.change), [
      "+label in progress",
      "-label in progress",
      "state closed (completed)",
    ]);
    assert.deepEqual(fake.issues[0].labels, ["agent"]);
    assert.equal(await Deno.readTextFile(join(root, "five.txt")), "done\n");
    const state = JSON.parse(await Deno.readTextFile(join(root, ".sdd/runtime/orchestrator.json")));
    const rows = async () =>
      (await Deno.readTextFile(join(root, ".sdd/runs", state.run_id, "journal.jsonl")))
        .trim().split("\n").map((l) => JSON.parse(l));
    const moved = async () =>
      (await rows()).filter((r) => r.type === "task_ticket_moved").map((r) => r.data);
    await until(
      "the landing's move journaled",
      async () => (await moved()).some((d) => d.event === "landed"),
      30_000,
    );
    const journal = await rows();
    const types = journal.map((r) => r.type);
    // One move per event; a second attempt's claim (if the run made one) finds it there already.
    const [first, ...later] = await moved();
    assert.deepEqual([first.event, first.outcome, first.state], [
      "claimed",
      "moved",
      "in progress",
    ]);
    assert.deepEqual(
      later.map((d) => [d.event, d.outcome, d.state]).filter((m) => m[1] !== "already"),
      [
        ["landed", "moved", "closed"],
      ],
    );
    // The claim's move comes before the merge (the store's claim precedes its task_claimed row,
    // written once the agent started), the landing's after it.
    assert.ok(types.indexOf("task_ticket_moved") < types.indexOf("task_merged"));
    assert.ok(types.indexOf("task_merged") < types.lastIndexOf("task_ticket_moved"));
    const moves = fake.requests.filter((r) => r.method !== "GET");
    for (const r of moves) assert.equal(r.headers.get("authorization"), "Bearer gh-token");
    // `integrations list` shows the last move (the runtime file is written within half a second).
    const lastMove = async () => {
      const listed = await cli(root, "integrations", "list", "--json");
      return JSON.parse(listed.out).integrations
        .find((r: { adapter: string }) => r.adapter === "tracker_b").last_move;
    };
    await until("integrations list shows the move", async () => (await lastMove()) !== null);
    assert.match(
      (await lastMove()).detail,
      /^octo\/app#5 moved to closed for tracker_b-octo-app-5$/,
    );
    const stop = await cli(root, "stop");
    stopped = true;
    assert.equal(stop.code, 0, stop.out);
  } finally {
    if (!stopped) await cli(root, "stop");
    Deno.env.delete(tokenVar);
  }
});
