/** The live run's gauges, from the decision core's state (pure). */
import assert from "node:assert/strict";
import { runGauges } from "./gauges.ts";
import type { CoreState, TaskView } from "./state.ts";
import { coreSettings, coreState, taskView } from "./_test_state.ts";

const SETTINGS = coreSettings({ maxAgents: 0, chains: { backend: ["claude", "codex"] } });
const task = taskView;

function state(tasks: TaskView[], over: Partial<CoreState> = {}): CoreState {
  return coreState(SETTINGS, tasks, over);
}

Deno.test("runGauges(): ready counts what a free slot could start now, whatever max_agents says", () => {
  const s = state([
    task("t1"), // ready
    task("t2", { role: "docs" }), // ready
    task("t3", { owned_files: ["a"] }), // ready (first holder of a)
    task("t4", { owned_files: ["a"] }), // waits for t3's owned file
    task("t5", { depends_on: ["t6"] }), // waits for t6's merge
    task("t6", { status: "DONE" }),
    task("t7", { batch: true }), // goes to the batch lane, not a slot
    task("t8"), // already starting
    task("t9", { status: "BLOCKED" }),
    task("t10", { status: "IN_PROGRESS", owned_files: ["b"] }),
    task("t11", { owned_files: ["b"] }), // t10 holds b
  ], {
    starting: new Set(["t8"]),
    sessions: new Map([["t10", { taskId: "t10", sessionId: "s", startedAt: 0, deadline: 1 }]]),
  });
  const g = runGauges(s, "r1", ["backend", "docs", "ml"]);
  assert.deepEqual(g.ready, { backend: 2, docs: 1, ml: 0 });
  assert.deepEqual(g.roles, ["backend", "docs", "ml"]);
  assert.equal(runGauges({ ...s, readOnly: true }, "r1", []).ready.backend ?? 0, 0, "budget");
});

Deno.test("runGauges(): running here and on workers, the landing queue, parked adapters", () => {
  const s = state([task("t1", { status: "IN_PROGRESS" })], {
    sessions: new Map([
      ["a", { taskId: "a", sessionId: "s1", startedAt: 0, deadline: 1 }],
      ["b", { taskId: "b", sessionId: "s2", startedAt: 0, deadline: 1, worker: "w1" }],
      ["c", { taskId: "c", sessionId: "s3", startedAt: 0, deadline: 1, worker: "w2" }],
      ["d", { taskId: "d", sessionId: "s4", startedAt: 0, deadline: 1, batchId: "b1" }],
    ]),
    landings: new Map([["x", {
      taskId: "x",
      stage: "merging",
      reason: "",
      lastTry: 0,
      rebases: 0,
    }]]),
    parked: { claude: 12.2 },
  });
  const g = runGauges(s, "r1", ["backend"]);
  assert.deepEqual(g.running, { local: 1, remote: 2 });
  assert.equal(g.landingQueue, 1);
  assert.deepEqual(g.parked, { claude: 13, codex: 0 });
});
