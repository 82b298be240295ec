import assert from "node:assert/strict";
import { join } from "node:path";
import { writeRunState } from "../runs/run_state.ts";
import { TRACKER_RUN_PLAN } from "../trackers/service_run.ts";
import { workspacePaths } from "../workspace.ts";
import { type RunsItFacts, runsItWords, whoRunsIt } from "./runs_it.ts";

Deno.test("runsItWords() says which run takes a new task", () => {
  const cases: [string, RunsItFacts, RegExp][] = [
    [
      "a live continuous run",
      { live: { runId: "r1", continuous: true }, next: { kind: "tracker_run" } },
      /^the running run r1 takes it now$/,
    ],
    [
      "a live plan run",
      { live: { runId: "r1", continuous: false }, next: { kind: "tracker_run" } },
      /^run r1 is running a plan and does not take it; once that run ends, `service run` \(without a plan\) takes it$/,
    ],
    [
      "no run, a stopped continuous run to resume",
      {
        next: {
          kind: "resume",
          runId: "r0",
          taskIds: [],
          planFile: TRACKER_RUN_PLAN,
          continuous: true,
          unfinished: [],
        },
      },
      /^no run is running: `service run` resumes run r0, which takes it$/,
    ],
    [
      "no run, a plan run to resume first",
      {
        next: {
          kind: "resume",
          runId: "r0",
          taskIds: ["a"],
          planFile: "plan.yaml",
          continuous: false,
          unfinished: [{ id: "a", run_id: "r0", status: "OPEN" }],
        },
      },
      /first resumes run r0 \(1 unfinished task\(s\)\); once that run ends, the next `service run` takes it/,
    ],
    [
      "no run, plan.yaml in the workspace",
      { next: { kind: "needs", fact: "steps", planFile: "plan.yaml" } },
      /`service run` runs the workspace's plan.yaml instead, which does not take it/,
    ],
  ];
  for (const [name, facts, words] of cases) assert.match(runsItWords(facts), words, name);
});

Deno.test("whoRunsIt() reads the live run's state and the workspace's plan.yaml", async () => {
  const root = await Deno.makeTempDir({ prefix: "runs-it-" });
  await using _ = { [Symbol.asyncDispose]: () => Deno.remove(root, { recursive: true }) };
  const ws = { root, paths: workspacePaths(root) };
  const waiting = [{ id: "t-1", run_id: null, status: "OPEN" as const }];
  assert.match(await whoRunsIt(ws.paths, waiting), /`service run` \(without a plan\) takes it/);
  await Deno.writeTextFile(join(ws.root, "plan.yaml"), "name: p\nsteps: []\n");
  assert.match(await whoRunsIt(ws.paths, waiting), /runs the workspace's plan.yaml instead/);
  const live = {
    run_id: "run-live",
    pid: Deno.pid,
    plan: TRACKER_RUN_PLAN,
    url: "http://127.0.0.1:1",
    started_at: 0,
    status: "running" as const,
  };
  await writeRunState(ws.paths, live);
  assert.equal(await whoRunsIt(ws.paths, waiting), "the running run run-live takes it now");
  await writeRunState(ws.paths, { ...live, plan: join(ws.root, "plan.yaml") });
  assert.match(await whoRunsIt(ws.paths, waiting), /^run run-live is running a plan/);
});
