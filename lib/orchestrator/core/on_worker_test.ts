/** Table tests of remote workers in the decision core (DESIGN.md §16). */
import assert from "node:assert/strict";
import { decide } from "./decide.ts";
import type { Action } from "./protocol.ts";
import type { CoreState, TaskView } from "./state.ts";
import { coreSettings, coreState, taskView } from "./_test_state.ts";

const SETTINGS = coreSettings({ maxAgents: 1 });
const task = taskView;

function state(tasks: TaskView[], over: Partial<CoreState> = {}): CoreState {
  return coreState(SETTINGS, tasks, over);
}

function dispatched(actions: Action[]): string[] {
  const d = actions.find((a) => a.kind === "dispatch");
  assert.ok(d && d.kind === "dispatch", "a worker's request is always answered");
  return d.tasks.map((t) => t.taskId);
}

const ask = (free: number, roles?: string[]) => ({
  type: "worker_asks" as const,
  requestId: "r",
  worker: "w1",
  free,
  ...(roles ? { roles } : {}),
});

Deno.test("decide(worker_asks): a worker gets up to its free slots, whatever max_agents says", () => {
  const s = state([task("t1"), task("t2"), task("t3")]);
  const step = decide(s, ask(2));
  assert.deepEqual(dispatched(step.actions), ["t1", "t2"]);
  assert.deepEqual([...step.state.starting].sort(), ["t1", "t2"]);
});

Deno.test("decide(worker_asks): owned files, roles, pending merges and the budget hold as for local agents", () => {
  const remote = {
    taskId: "t1",
    sessionId: "s1",
    startedAt: 0,
    deadline: 10_000,
    worker: "w0",
  };
  const s = state([
    task("t1", { status: "IN_PROGRESS", owned_files: ["src/a.ts"] }),
    task("t2", { owned_files: ["src/a.ts"] }),
    task("t3", { role: "docs" }),
    task("t4", { depends_on: ["t5"] }),
    task("t5", { status: "DONE" }),
    task("t6"),
  ], { sessions: new Map([["t1", remote]]) });
  assert.deepEqual(dispatched(decide(s, ask(8, ["backend"])).actions), ["t6"]);
  assert.deepEqual(dispatched(decide({ ...s, readOnly: true }, ask(8)).actions), []);
  assert.deepEqual(dispatched(decide({ ...s, stopping: true }, ask(8)).actions), []);
});

Deno.test("decide(settle): a task on a worker takes no local slot but holds its owned files", () => {
  const s = state([
    task("t1", { status: "IN_PROGRESS", owned_files: ["x"] }),
    task("t2", { owned_files: ["x"] }),
    task("t3"),
  ], {
    sessions: new Map([["t1", {
      taskId: "t1",
      sessionId: "s1",
      startedAt: 0,
      deadline: 10_000,
      worker: "w0",
    }]]),
  });
  const spawns = decide(s, { type: "settle" }).actions.filter((a) => a.kind === "spawn");
  assert.deepEqual(spawns.map((a) => a.kind === "spawn" && a.taskId), ["t3"]);
});

Deno.test("decide(task_changed ORPHANED): a remote session's lost lease fetches its pushed work once", () => {
  const session = { taskId: "t1", sessionId: "s1", startedAt: 0, deadline: 10_000, worker: "w0" };
  const s = state([task("t1", { status: "ORPHANED" })], { sessions: new Map([["t1", session]]) });
  const step = decide(s, {
    type: "task_changed",
    taskId: "t1",
    from: "IN_PROGRESS",
    to: "ORPHANED",
  });
  const lost = step.actions.filter((a) => a.kind === "remote_lost");
  assert.equal(lost.length, 1);
  assert.match(
    lost[0].kind === "remote_lost" ? lost[0].reason : "",
    /worker w0 stopped heartbeating/,
  );
  const again = decide(step.state, {
    type: "task_changed",
    taskId: "t1",
    from: "IN_PROGRESS",
    to: "ORPHANED",
  });
  assert.equal(again.actions.filter((a) => a.kind === "remote_lost").length, 0);
});

Deno.test("decide(stop): agents on workers go on; the run does not wait for them", () => {
  const session = { taskId: "t1", sessionId: "s1", startedAt: 0, deadline: 10_000, worker: "w0" };
  const s = state([task("t1", { status: "IN_PROGRESS" })], {
    sessions: new Map([["t1", session]]),
  });
  const step = decide(s, { type: "stop" });
  assert.equal(step.actions.filter((a) => a.kind === "terminate").length, 0);
  assert.equal(step.state.sessions.size, 0);
});

Deno.test("decide(agent_exited): a remote session's end after its task moved on to another session changes nothing", () => {
  const current = { taskId: "t1", sessionId: "s2", startedAt: 0, deadline: 10_000, worker: "w2" };
  const s = state([task("t1", { status: "IN_PROGRESS" })], {
    sessions: new Map([["t1", current]]),
  });
  const step = decide(s, {
    type: "agent_exited",
    taskId: "t1",
    sessionId: "s1",
    exitCode: -9,
    durationMs: 5,
    rateLimited: false,
    hasWork: false,
    diagnosis: { kind: "agent_lost", reason: "worker w1 stopped heartbeating", retryable: true },
    remote: { worker: "w1", commit: null },
  });
  assert.deepEqual(step.actions, []);
  assert.equal(step.state.sessions.get("t1")?.sessionId, "s2", "the current attempt goes on");
});

/** A remote session `s1` on worker w1 whose report says it was drained. */
function drainedExit(hasWork: boolean) {
  return {
    type: "agent_exited" as const,
    taskId: "t1",
    sessionId: "s1",
    exitCode: -15,
    durationMs: 5000,
    rateLimited: false,
    hasWork,
    diagnosis: {
      kind: "agent_drained",
      reason: "drained: its worker was stopping",
      retryable: true,
    },
    remote: { worker: "w1", commit: hasWork ? "a".repeat(40) : null, drained: true },
  };
}

const ON_W1 = { taskId: "t1", sessionId: "s1", startedAt: 0, deadline: 99_000, worker: "w1" };

Deno.test("decide(agent_exited drained): the lease goes at once, no attempt counts, the next attempt continues the pushed work", () => {
  for (
    const [hasWork, resumeFrom, words] of [
      [
        true,
        "s1",
        /drained from worker w1 \(it was stopping\); a new attempt continues from the work it pushed \(no attempt counted\)/,
      ],
      [false, null, /drained from worker w1 .*it pushed no work; a new attempt starts afresh/],
    ] as const
  ) {
    const s = state([task("t1", { status: "IN_PROGRESS", attempts: 1 })], {
      sessions: new Map([["t1", ON_W1]]),
    });
    const step = decide(s, drainedExit(hasWork));
    const rows = step.actions.flatMap((a) => a.kind === "journal" ? [a.event] : []);
    const exit = rows.find((r) => r.type === "agent_exited")!;
    assert.equal(exit.data.ended_by, "drain");
    assert.equal(exit.data.worker, "w1");
    assert.equal("drained" in exit.data, false, "the row says ended_by, nothing else new");
    assert.equal(rows.filter((r) => r.type === "task_verification_failed").length, 0, "no failure");
    const retried = rows.find((r) => r.type === "task_retried")!;
    assert.match(String(retried.data.reason), words);
    const changes = step.actions.flatMap((a) => a.kind === "store" ? [a.change] : []);
    assert.deepEqual(changes.map((c) => c.op), ["orphan", "requeue"]);
    const requeue = changes[1];
    assert.ok(requeue.op === "requeue");
    assert.equal(requeue.countAttempt, false);
    assert.equal(requeue.resumeFrom, resumeFrom);
    assert.ok(step.actions.some((a) => a.kind === "reap"), "its worktree here is reaped");
    assert.equal(step.state.sessions.size, 0);
  }
});

Deno.test("decide(agent_exited drained): work its agent reported before the drain ended it lands", () => {
  const s = state([task("t1", { status: "DONE", attempts: 1 })], {
    sessions: new Map([["t1", ON_W1]]),
  });
  const step = decide(s, drainedExit(true));
  assert.ok(step.actions.some((a) => a.kind === "capture"), "it goes on to land");
  assert.equal(step.actions.some((a) => a.kind === "store"), false);
});

Deno.test("decide(agent_exited): a worker's stop that is not a drain still counts the attempt", () => {
  const s = state([task("t1", { status: "IN_PROGRESS", attempts: 1 })], {
    sessions: new Map([["t1", ON_W1]]),
  });
  const e = drainedExit(true);
  const step = decide(s, { ...e, remote: { worker: "w1", commit: e.remote.commit } });
  const requeue = step.actions.flatMap((a) =>
    a.kind === "store" && a.change.op === "requeue" ? [a.change] : []
  );
  assert.equal(requeue[0]?.countAttempt, true);
});

// Kubernetes Jobs (DESIGN.md §17): the launcher reserves, each Job's pod claims with its ticket.

const reserve = (free: number) => ({
  ...ask(free),
  requestId: "k",
  worker: "kubernetes",
  reserve: true,
});
const ticketClaim = (taskId: string, worker = "svc-t1-pod") => ({
  ...ask(1),
  requestId: "p",
  worker,
  task: taskId,
});

Deno.test("decide(worker_asks reserve): the launcher's tasks are held for their Jobs, under the one schedule", () => {
  const s = state([
    task("t1", { owned_files: ["a"] }),
    task("t2", { owned_files: ["a"] }),
    task("t3", { depends_on: ["t9"] }),
    task("t9", { status: "DONE" }),
    task("t4"),
  ]);
  const step = decide(s, reserve(5));
  const answer = step.actions.find((a) => a.kind === "dispatch");
  assert.ok(answer?.kind === "dispatch" && answer.reserve === true);
  assert.deepEqual(
    dispatched(step.actions),
    ["t1", "t4"],
    "t2 shares a file, t3 waits for a merge",
  );
  assert.deepEqual([...step.state.launching.keys()], ["t1", "t4"]);
  assert.deepEqual([...step.state.starting].sort(), ["t1", "t4"]);
  // Reserved tasks are nobody else's: not a worker's, not a local agent's.
  assert.deepEqual(dispatched(decide(step.state, ask(5)).actions), []);
  const settle = decide(step.state, { type: "settle" }).actions.filter((a) => a.kind === "spawn");
  assert.deepEqual(settle, []);
});

Deno.test("decide(worker_asks task): a pod's ticket claims its reserved task and nothing else", () => {
  const reserved = decide(state([task("t1"), task("t2")]), reserve(1)).state;
  const mine = decide(reserved, ticketClaim("t1"));
  assert.deepEqual(dispatched(mine.actions), ["t1"]);
  const answer = mine.actions.find((a) => a.kind === "dispatch");
  assert.ok(
    answer?.kind === "dispatch" && answer.reserve === undefined,
    "a claim, not a reservation",
  );
  assert.equal(mine.state.launching.size, 0);
  assert.ok(mine.state.starting.has("t1"), "it stays starting until the claim is recorded");
  // A ticket of a task that is not ready (claimed by the other pod already, cancelled, done) gets none.
  assert.deepEqual(dispatched(decide(mine.state, ticketClaim("t1", "other-pod")).actions), []);
  // After a restart, before the launcher found its Job: a ready task is claimed as the schedule says.
  assert.deepEqual(dispatched(decide(state([task("t1"), task("t2")]), ticketClaim("t2")).actions), [
    "t2",
  ]);
});

Deno.test("decide(launch_lapsed): a Job that ended before its pod claimed frees the task for a new Job", () => {
  const reserved = decide(state([task("t1")]), reserve(1)).state;
  const step = decide(reserved, {
    type: "launch_lapsed",
    taskId: "t1",
    reason: "Job svc-t1 failed before its pod claimed the task: ImagePullBackOff",
  });
  assert.equal(step.state.starting.size, 0);
  assert.equal(step.state.launching.size, 0);
  assert.ok(step.actions.some((a) => a.kind === "log" && /ImagePullBackOff/.test(a.line)));
  assert.deepEqual(dispatched(decide(step.state, reserve(1)).actions), ["t1"]);
  // A lapse of a task no longer reserved (its pod claimed it) changes nothing.
  const claimed = decide(reserved, ticketClaim("t1")).state;
  assert.deepEqual(
    decide(claimed, { type: "launch_lapsed", taskId: "t1", reason: "x" }).actions,
    [],
  );
});

Deno.test("decide(launch_adopted): a restarted run waits for the Job it finds instead of making another", () => {
  const s = state([task("t1"), task("t2", { status: "CLAIMED" })]);
  const step = decide(s, { type: "launch_adopted", taskId: "t1", job: "svc-t1" });
  assert.ok(step.state.launching.has("t1"));
  assert.deepEqual(dispatched(decide(step.state, reserve(5)).actions), []);
  assert.equal(
    decide(s, { type: "launch_adopted", taskId: "t2", job: "svc-t2" }).state.launching.size,
    0,
    "a task no longer OPEN is not reserved",
  );
});

Deno.test("decide(task_changed CANCELLED): a reserved task is cancelled at once; its pod's claim gets nothing", () => {
  const reserved = decide(state([task("t1")]), reserve(1)).state;
  const cancelled = { ...reserved, tasks: new Map([["t1", task("t1", { status: "CANCELLED" })]]) };
  const step = decide(cancelled, {
    type: "task_changed",
    taskId: "t1",
    from: "OPEN",
    to: "CANCELLED",
  });
  assert.equal(step.state.starting.size, 0);
  assert.ok(step.actions.some((a) => a.kind === "journal" && a.event.type === "task_cancelled"));
  assert.deepEqual(dispatched(decide(step.state, ticketClaim("t1")).actions), []);
});

Deno.test("decide(stop): reserved tasks do not keep a stopping run waiting; their Jobs go on", () => {
  const reserved = decide(state([task("t1")]), reserve(1)).state;
  const step = decide(reserved, { type: "stop" });
  assert.equal(step.state.starting.size, 0);
  assert.ok(
    step.actions.some((a) => a.kind === "log" && /next `service run` adopts it/.test(a.line)),
  );
  const settled = decide(step.state, { type: "settle" });
  assert.ok(settled.actions.some((a) => a.kind === "finish"));
});
