/** Table test of the launcher's plan: which Jobs count, go, lapse, lose their session or are adopted. */
import assert from "node:assert/strict";
import { type ListedJob, type PlanInput, planJobs, type TaskLease } from "./plan.ts";

const job = (task: string, session: string, over: Partial<ListedJob> = {}): ListedJob => ({
  name: `svc-${task}-${session}`,
  runId: "r1",
  taskId: task,
  sessionId: session,
  deleting: false,
  ...over,
});

const lease = (status: string, session?: string): TaskLease => ({
  status,
  ...(session ? { session_id: session, worker: `svc-pod-${session}` } : {}),
});

function input(over: Partial<PlanInput>): PlanInput {
  return {
    jobs: [],
    pods: [],
    tasks: new Map(),
    reserved: new Map(),
    maxInFlight: 3,
    now: 100_000,
    ttlAfterFinishedMs: 60_000,
    ...over,
  };
}

type Row = {
  name: string;
  in: Partial<PlanInput>;
  want: {
    free: number;
    delete?: string[];
    lapsed?: string[];
    lost?: string[];
    adopt?: string[];
  };
};
const failed = { outcome: "failed" as const, reason: "BackoffLimitExceeded", finishedAt: 90_000 };
const TABLE: Row[] = [
  { name: "nothing listed: every slot is free", in: {}, want: { free: 3 } },
  {
    name: "a live reserved Job counts",
    in: {
      jobs: [job("t1", "s1")],
      tasks: new Map([["t1", lease("OPEN")]]),
      reserved: new Map([["t1", "s1"]]),
    },
    want: { free: 2 },
  },
  {
    name: "a live Job whose pod claimed counts",
    in: { jobs: [job("t1", "s1")], tasks: new Map([["t1", lease("IN_PROGRESS", "s1")]]) },
    want: { free: 2 },
  },
  {
    name: "a live Job of a cancelled task is deleted and does not count",
    in: { jobs: [job("t1", "s1")], tasks: new Map([["t1", lease("CANCELLED", "s1")]]) },
    want: { free: 3, delete: ["svc-t1-s1"] },
  },
  {
    name: "a live Job whose task another session holds is deleted",
    in: { jobs: [job("t1", "s1")], tasks: new Map([["t1", lease("CLAIMED", "s9")]]) },
    want: { free: 3, delete: ["svc-t1-s1"] },
  },
  {
    name: "a live Job of a task not in the run is deleted",
    in: { jobs: [job("t7", "s1")] },
    want: { free: 3, delete: ["svc-t7-s1"] },
  },
  {
    name: "a live Job for an OPEN task nobody reserved is adopted (a restart)",
    in: { jobs: [job("t1", "s1")], tasks: new Map([["t1", lease("OPEN")]]) },
    want: { free: 2, adopt: ["t1"] },
  },
  {
    name: "two live Jobs for one OPEN task after a restart: the first adopted, the second deleted",
    in: { jobs: [job("t1", "s1"), job("t1", "s2")], tasks: new Map([["t1", lease("OPEN")]]) },
    want: { free: 2, adopt: ["t1"], delete: ["svc-t1-s2"] },
  },
  {
    name: "a failed Job whose pod never claimed: the task lapses, with the pod's reason",
    in: {
      jobs: [job("t1", "s1", failed)],
      pods: [{
        name: "svc-t1-s1-abcde",
        job: "svc-t1-s1",
        phase: "Failed",
        reason: "Error (exit 1)",
      }],
      tasks: new Map([["t1", lease("OPEN")]]),
      reserved: new Map([["t1", "s1"]]),
    },
    want: { free: 3, lapsed: ["t1"] },
  },
  {
    name: "a failed Job whose pod held the task: its session is lost now",
    in: {
      jobs: [job("t1", "s1", failed)],
      tasks: new Map([["t1", lease("IN_PROGRESS", "s1")]]),
    },
    want: { free: 3, lost: ["t1"] },
  },
  {
    name: "a completed Job whose worker reported: nothing to do until its TTL",
    in: {
      jobs: [job("t1", "s1", { outcome: "succeeded", finishedAt: 50_000 })],
      tasks: new Map([["t1", lease("DONE", "s1")]]),
    },
    want: { free: 3 },
  },
  {
    name: "a finished Job past its TTL is reaped",
    in: {
      jobs: [job("t1", "s1", { outcome: "succeeded", finishedAt: 40_000 })],
      tasks: new Map([["t1", lease("CLOSED", "s1")]]),
    },
    want: { free: 3, delete: ["svc-t1-s1"] },
  },
  {
    name: "Jobs being deleted neither count nor are judged",
    in: { jobs: [job("t1", "s1", { deleting: true })], tasks: new Map([["t1", lease("OPEN")]]) },
    want: { free: 3 },
  },
  {
    name: "max_in_flight reached: no room, never negative",
    in: {
      maxInFlight: 2,
      jobs: [job("t1", "s1"), job("t2", "s2"), job("t3", "s3")],
      tasks: new Map([
        ["t1", lease("IN_PROGRESS", "s1")],
        ["t2", lease("IN_PROGRESS", "s2")],
        ["t3", lease("IN_PROGRESS", "s3")],
      ]),
    },
    want: { free: 0 },
  },
  {
    name: "a lapsed Job of a task reserved for a newer Job is not a lapse of that reservation",
    in: {
      jobs: [job("t1", "s1", failed), job("t1", "s2")],
      tasks: new Map([["t1", lease("OPEN")]]),
      reserved: new Map([["t1", "s2"]]),
    },
    want: { free: 2 },
  },
];

Deno.test("planJobs(): each Job against its task, by the table", () => {
  for (const row of TABLE) {
    const plan = planJobs(input(row.in));
    assert.equal(plan.free, row.want.free, `${row.name}: free`);
    assert.deepEqual(plan.delete.map((d) => d.job), row.want.delete ?? [], `${row.name}: delete`);
    assert.deepEqual(
      plan.lapsed.map((d) => d.taskId),
      row.want.lapsed ?? [],
      `${row.name}: lapsed`,
    );
    assert.deepEqual(plan.lost.map((d) => d.taskId), row.want.lost ?? [], `${row.name}: lost`);
    assert.deepEqual(plan.adopt.map((d) => d.taskId), row.want.adopt ?? [], `${row.name}: adopt`);
  }
});

Deno.test("planJobs(): a lapse says how the Job and its pod ended", () => {
  const plan = planJobs(input({
    jobs: [job("t1", "s1", { outcome: "failed", reason: "DeadlineExceeded", finishedAt: 1 })],
    pods: [{ name: "p", job: "svc-t1-s1", phase: "Pending", reason: "ImagePullBackOff" }],
    tasks: new Map([["t1", lease("OPEN")]]),
    reserved: new Map([["t1", "s1"]]),
  }));
  assert.match(
    plan.lapsed[0].reason,
    /Job svc-t1-s1 failed \(DeadlineExceeded; pod p: ImagePullBackOff\)/,
  );
});
