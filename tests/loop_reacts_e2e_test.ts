/**
 * The run loop decides every event when it arrives; its tick is for timeouts only. With the tick
 * stretched to an hour, a run still starts a task created through the task API, starts the next
 * task when one lands, ends when every task has landed, and stops on request (real git, the
 * scripted agent through the generic adapter, the real task server).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { runPlan, type RunResult } from "../lib/runner/run.ts";
import { readRunState } from "../lib/runs/run_state.ts";
import { workspacePaths } from "../lib/workspace.ts";
import { SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { AGENT, rowsOf, sh, until, workspace } from "./_e2e.ts";

/** A tick that never comes while the test runs. */
const HOUR_MS = 3_600_000;

const quiet = { out: () => {}, port: 0, app: SERVER_APP, tickMs: HOUR_MS };

/** `run` settled within `ms`, else an error naming `what` (nothing may wait for a tick). */
async function within(what: string, run: Promise<RunResult>, ms = 60_000): Promise<RunResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} waited for a tick`)), ms);
  });
  try {
    return await Promise.race([run, late]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a run starts each task when the one before it lands and ends when all landed, with no tick", async () => {
  await using dir = await tempDir();
  await workspace(
    dir.path,
    [{
      name: "s",
      steps: [
        { id: "a", script: [["write", "a.txt", "a\n"], ["report"]] },
        { id: "b", script: [["write", "b.txt", "b\n"], ["report"]] },
      ],
    }],
    "max_agents: 1\n",
  );
  const result = await within("the run", runPlan({ root: dir.path, ...quiet }));
  assert.equal(result.status, "completed", result.problems.join("\n"));
  const rows = await rowsOf(dir.path, result.runId);
  assert.deepEqual(
    rows.filter((r) => r.type === "task_merged").map((r) => r.data.task_id),
    ["a", "b"],
  );
});

Deno.test("a continuous run claims a task created through the task API at once, not on a tick, and stops on request", async () => {
  await using dir = await tempDir();
  const root = dir.path;
  const secretVar = `WH_LOOP_${Deno.pid}`;
  Deno.env.set(secretVar, "loop-secret");
  await sh(root, "init", "-q", "-b", "main");
  await sh(root, "config", "user.email", "t@localhost");
  await sh(root, "config", "user.name", "t");
  await Deno.writeTextFile(join(root, "README.md"), "# loop\n");
  await Deno.writeTextFile(
    join(root, "service.yaml"),
    `cli: generic\ncli_command: ${JSON.stringify(["deno", "run", "-A", AGENT])}\n` +
      `roles:\n  backend: {}\ntrackers:\n  tracker_b:\n` +
      `    webhook: { enabled: true, secret_env: ${secretVar} }\n`,
  );
  await sh(root, "add", "-A");
  await sh(root, "commit", "-q", "-m", "init");
  const controller = new AbortController();
  const running = runPlan({ root, ...quiet, signal: controller.signal });
  try {
    let url = "";
    await until("the run to serve", async () => {
      const state = await readRunState(workspacePaths(root));
      url = state?.status === "running" ? state.url : "";
      return url !== "";
    });
    const created = await fetch(`${url}/tasks`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        id: "api1",
        title: "Through the task API",
        role: "backend",
        goal: "```agent-script\n" + JSON.stringify(["write", "api1.txt", "api\n"]) +
          '\n["report"]\n```',
      }),
    });
    assert.equal(created.status, 201, await created.text());
    const status = async () => (await (await fetch(`${url}/tasks/api1`)).json()).status as string;
    await until("api1 claimed", async () => await status() !== "OPEN", 30_000);
    await until("api1 landed", async () => await status() === "CLOSED", 60_000);
    assert.equal(await Deno.readTextFile(join(root, "api1.txt")), "api\n");
  } finally {
    controller.abort();
  }
  const result = await within("the stop", running);
  assert.equal(result.status, "stopped");
  assert.equal(result.unfinished, 0);
});
