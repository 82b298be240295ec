/** Table test of how `service run` starts: every outcome of {@link decideRunStart}. */
import assert from "node:assert/strict";
import type { RunState } from "../runs/run_state.ts";
import type { DoneStep, KeyedTask } from "./plan_steps.ts";
import { decideRunStart, type RunStart, type RunStartFacts, type TaskFacts } from "./run_start.ts";
import { TRACKER_RUN_PLAN } from "../trackers/service_run.ts";

const ROOT = "/repo";
const PLAN = "/repo/plan.yaml";
const OTHER = "/repo/other.yaml";

function state(over: Partial<RunState> = {}): RunState {
  return {
    run_id: "run-a",
    pid: 111,
    plan: PLAN,
    plan_sha256: "sha256:aa",
    url: "http://127.0.0.1:8052",
    started_at: 1,
    status: "stopped",
    ...over,
  };
}

function task(id: string, run: string | null, status: TaskFacts["status"], done = false) {
  return { id, run_id: run, status, ...(done ? { operator_done: true } : {}) } as TaskFacts;
}

function step(id: string): KeyedTask {
  return { id, step_key: `k-${id}`, stage: "s", depends_on: [] } as unknown as KeyedTask;
}

function done(id: string, commit?: string): DoneStep {
  return {
    ...step(id),
    earlier: { run_id: "run-old", task_id: id, ...(commit ? { commit } : {}) },
  };
}

const BASE: RunStartFacts = {
  root: ROOT,
  pid: 222,
  defaultPlan: { file: PLAN, exists: true },
  trackers: false,
  tasks: [],
};

/** The decision in a word, and the detail a table can compare. */
function outline(start: RunStart): string {
  switch (start.kind) {
    case "refuse":
      return `refuse: ${start.message}`;
    case "needs":
      return start.fact === "steps" ? `needs steps of ${start.planFile}` : "needs tasks";
    case "resume":
      return `resume ${start.runId} [${start.taskIds}] from ${start.planFile}` +
        (start.continuous ? " continuously" : "");
    case "tracker_run":
      return "tracker run";
    case "new_run":
      return `new run of ${start.planFile}: [${start.steps.todo.map((t) => t.id)}]` +
        (start.archive.length ? ` archiving [${start.archive}]` : "");
    case "up_to_date":
      return `up to date: ${start.planFile}`;
  }
}

Deno.test("decideRunStart() resumes, refuses, runs from trackers, starts a new run or says it is up to date", () => {
  const blockedA = [task("t1", "run-a", "FAILED"), task("t2", "run-a", "BLOCKED")];
  const openA = [task("t1", "run-a", "CLOSED"), task("t2", "run-a", "OPEN")];
  const table: [string, Partial<RunStartFacts>, string][] = [
    [
      "another live process runs a run: refused before anything else is read",
      { previous: state({ status: "running" }), previousAlive: true, tasks: undefined },
      "refuse: run run-a is in progress (pid 111, http://127.0.0.1:8052)",
    ],
    [
      "the run state says running but its process is gone: the store is asked",
      { previous: state({ status: "running" }), previousAlive: false, tasks: undefined },
      "needs tasks",
    ],
    [
      "this very process wrote `running` (a resume in process): not in progress",
      { previous: state({ status: "running", pid: 222 }), previousAlive: true, tasks: undefined },
      "needs tasks",
    ],
    [
      "no plan, a run with unfinished tasks: it resumes",
      { previous: state(), tasks: openA },
      `resume run-a [t1,t2] from ${PLAN}`,
    ],
    [
      "the same plan, unchanged: it resumes",
      { previous: state(), tasks: openA, plan: { file: PLAN, sha256: "sha256:aa" } },
      `resume run-a [t1,t2] from ${PLAN}`,
    ],
    [
      "the same plan, edited since: refused, with the way out",
      { previous: state(), tasks: openA, plan: { file: PLAN, sha256: "sha256:bb" } },
      "refuse: run run-a (plan.yaml) has 1 unfinished task(s): t2 (OPEN)",
    ],
    [
      "another plan while a run is unfinished: refused",
      { previous: state(), tasks: blockedA, plan: { file: OTHER, sha256: "sha256:cc" } },
      "refuse: run run-a (plan.yaml) has 1 unfinished task(s): t2 (BLOCKED)",
    ],
    [
      "the run state names another run: the newest unfinished run resumes, plan unknown",
      {
        previous: state({ run_id: "run-z" }),
        tasks: [task("a", "run-b", "OPEN"), task("c", "run-c", "BLOCKED")],
      },
      "resume run-c [c] from ",
    ],
    [
      "a stopped continuous run with trackers still configured resumes continuously",
      { previous: state({ plan: TRACKER_RUN_PLAN }), tasks: openA, trackers: true },
      `resume run-a [t1,t2] from ${TRACKER_RUN_PLAN} continuously`,
    ],
    [
      "a stopped continuous run started for tasks of the board (no trackers) resumes continuously",
      { previous: state({ plan: TRACKER_RUN_PLAN }), tasks: openA },
      `resume run-a [t1,t2] from ${TRACKER_RUN_PLAN} continuously`,
    ],
    [
      "operator-done and landed tasks are finished: nothing to resume, the plan runs",
      {
        previous: state(),
        tasks: [task("t1", "run-a", "CLOSED"), task("t2", "run-a", "DONE", true)],
      },
      `needs steps of ${PLAN}`,
    ],
    [
      "no plan, no plan.yaml, trackers configured: a continuous tracker run",
      { defaultPlan: { file: PLAN, exists: false }, trackers: true },
      "tracker run",
    ],
    [
      "no plan, no plan.yaml, no trackers, a task created on the board waits: a continuous run takes it",
      { defaultPlan: { file: PLAN, exists: false }, tasks: [task("b1", null, "OPEN")] },
      "tracker run",
    ],
    [
      "no plan, no plan.yaml, no trackers: nothing to run",
      { defaultPlan: { file: PLAN, exists: false } },
      "refuse: nothing to run: no earlier run has unfinished tasks and there is no plan.yaml",
    ],
    [
      "a plan passed while plan.yaml is missing and trackers are configured: the plan runs",
      {
        defaultPlan: { file: PLAN, exists: false },
        trackers: true,
        plan: { file: OTHER, sha256: "sha256:cc" },
      },
      `needs steps of ${OTHER}`,
    ],
    [
      "the plan's steps, none done before: a new run of all of them",
      { steps: { todo: [step("a"), step("b")], done: [] } },
      `new run of ${PLAN}: [a,b]`,
    ],
    [
      "some steps landed or were marked done by an operator: a new run of the rest",
      { steps: { todo: [step("b")], done: [done("a", "abc"), done("c")] } },
      `new run of ${PLAN}: [b]`,
    ],
    [
      "every step landed or was done by an operator: up to date, no run",
      { steps: { todo: [], done: [done("a", "abc"), done("c")] } },
      `up to date: ${PLAN}`,
    ],
    [
      "a step's id is an unfinished task of the task API: refused",
      { tasks: [task("a", null, "IN_PROGRESS")], steps: { todo: [step("a")], done: [] } },
      "refuse: task id(s) a (IN_PROGRESS) of the plan are unfinished tasks of the task API",
    ],
    [
      "a step's id is a finished task: archived, then the run starts",
      { tasks: [task("a", null, "CANCELLED")], steps: { todo: [step("a")], done: [] } },
      `new run of ${PLAN}: [a] archiving [a]`,
    ],
  ];
  for (const [name, facts, expected] of table) {
    assert.equal(outline(decideRunStart({ ...BASE, ...facts })), expected, name);
  }
});

Deno.test("decideRunStart() names the way out of each refusal", () => {
  const fixOf = (facts: Partial<RunStartFacts>) => {
    const start = decideRunStart({ ...BASE, ...facts });
    assert.equal(start.kind, "refuse");
    return start.kind === "refuse" ? start.fix : undefined;
  };
  assert.equal(
    fixOf({ previous: state({ status: "running" }), previousAlive: true }),
    "watch it with `service status`, or end it with `service stop`",
  );
  assert.equal(
    fixOf({
      previous: state(),
      tasks: [task("t2", "run-a", "OPEN")],
      plan: { file: OTHER, sha256: "sha256:cc" },
      planArg: "other.yaml",
    }),
    "`service run` resumes it; or `service cancel --all` cancels them, then " +
      "`service run other.yaml` starts a new run",
  );
  assert.match(fixOf({ defaultPlan: { file: PLAN, exists: false } })!, /configure `trackers`/);
  assert.equal(
    fixOf({ tasks: [task("a", null, "OPEN")], steps: { todo: [step("a")], done: [] } }),
    "`service cancel a`, or give the steps other `id:`s",
  );
});

Deno.test("decideRunStart() refuses to resume a run whose only unfinished tasks wait on FAILED ones, naming them and the way out", () => {
  const blocked = (id: string, deps: string[]) => ({
    ...task(id, "run-a", "BLOCKED"),
    depends_on: deps,
  });
  const start = decideRunStart({
    ...BASE,
    previous: state({ status: "failed" }),
    tasks: [
      { ...task("f1", "run-a", "FAILED"), depends_on: [] },
      blocked("f2", ["f1"]),
      blocked("f3", ["f2"]), // through a stuck task
    ],
  });
  assert.equal(start.kind, "refuse");
  const r = start as Extract<RunStart, { kind: "refuse" }>;
  assert.equal(
    r.message,
    "run run-a has nothing to run: f2 waits on f1 (FAILED); f3 waits on f1 (FAILED)",
  );
  assert.match(r.fix!, /^`service retry f1` tries again, or `service cancel f1` lets/);
});

Deno.test("decideRunStart() still resumes a run with a BLOCKED task that something can unblock", () => {
  const cases: [string, TaskFacts[]][] = [
    ["an OPEN task runs", [task("o", "run-a", "OPEN"), {
      ...task("b", "run-a", "BLOCKED"),
      depends_on: ["f"],
    }, task("f", "run-a", "FAILED")]],
    ["it waits on an unfinished task", [
      { ...task("b", "run-a", "BLOCKED"), depends_on: ["d"] },
      task("d", "run-a", "DONE"),
    ]],
    ["a cycle, not a failure", [{ ...task("x", "run-a", "BLOCKED"), depends_on: ["y"] }, {
      ...task("y", "run-a", "BLOCKED"),
      depends_on: ["x"],
    }]],
    ["a dependency this store does not know", [{
      ...task("b", "run-a", "BLOCKED"),
      depends_on: ["ghost"],
    }]],
    ["no depends_on recorded", [task("b", "run-a", "BLOCKED")]],
  ];
  for (const [why, tasks] of cases) {
    const start = decideRunStart({ ...BASE, previous: state({ status: "failed" }), tasks });
    assert.equal(start.kind, "resume", why);
  }
});
