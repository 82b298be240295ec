import assert from "node:assert/strict";
import { join } from "node:path";
import { auditPaths, verifyAuditFile } from "../audit/store.ts";
import { ConflictError, UnprocessableError } from "../errors.ts";
import { sha256Hex } from "../journal/hash.ts";
import { writeRunState } from "../runs/run_state.ts";
import { TaskStore } from "../tasks/store.ts";
import { TRACKER_RUN_PLAN } from "../trackers/service_run.ts";
import { workspacePaths } from "../workspace.ts";
import {
  BoardTaskSchema,
  createBoardTask,
  type RunsItFacts,
  runsItWords,
  TASK_CREATED_EVENT,
  whoRunsIt,
} from "./new_task.ts";

const KEY = new TextEncoder().encode("test-key");
const OPERATOR = { principal: "ops", scope: "operator" as const };

async function workspace() {
  const root = await Deno.makeTempDir({ prefix: "new-task-" });
  const paths = workspacePaths(root);
  const store = await TaskStore.open(paths, {
    roles: new Set(["backend"]),
    knownAdapter: (n) => n === "claude" || n === "scripted",
    warn: () => {},
  });
  const audit = auditPaths(paths.audit);
  const create = (input: Record<string, unknown>) =>
    createBoardTask({
      paths,
      store,
      input: BoardTaskSchema.parse(input),
      principal: OPERATOR,
      audit,
      auditKey: () => Promise.resolve(KEY),
    });
  return {
    root,
    paths,
    store,
    audit,
    create,
    auditLines: async () =>
      (await Deno.readTextFile(audit.log).catch(() => "")).split("\n").filter(Boolean),
    async [Symbol.asyncDispose]() {
      await Deno.remove(root, { recursive: true });
    },
  };
}

Deno.test("createBoardTask() signs the task's creation, then creates it as POST /tasks does", async () => {
  await using ws = await workspace();
  const created = await ws.create({
    title: "Add /health",
    role: "backend",
    goal: "Serve 200 at /health",
    cli: "scripted",
    priority: 7,
  });
  assert.match(created.task.id, /^t-[0-9a-f]{12}$/);
  assert.equal(created.task.status, "OPEN");
  assert.equal(created.task.cli, "scripted");
  assert.equal(created.task.priority, 7);
  assert.equal(ws.store.get(created.task.id)?.title, "Add /health");
  const [line] = await ws.auditLines();
  assert.equal(created.audit_event_hash, sha256Hex(line));
  const entry = JSON.parse(line);
  assert.equal(entry.event, TASK_CREATED_EVENT);
  assert.equal(entry.principal, "ops");
  assert.equal(entry.data.task_id, created.task.id);
  assert.equal(entry.data.scope, "operator");
  assert.equal(entry.data.goal_sha256, "sha256:" + sha256Hex("Serve 200 at /health"));
  assert.ok((await verifyAuditFile(ws.audit, KEY)).ok);
  assert.match(created.runs_it, /no run is running: `service run` \(without a plan\) takes it/);
});

Deno.test("createBoardTask() creates nothing and keeps no audit entry when the store refuses", async () => {
  await using ws = await workspace();
  await assert.rejects(ws.create({ title: "x", role: "frontend" }), UnprocessableError);
  await assert.rejects(ws.create({ title: "x", role: "backend", cli: "nope" }), UnprocessableError);
  assert.deepEqual(ws.store.list(), []);
  assert.deepEqual(await ws.auditLines(), []);
});

Deno.test("createBoardTask() refuses on a broken audit chain (409) and creates nothing", async () => {
  await using ws = await workspace();
  await ws.create({ title: "first", role: "backend" });
  const text = await Deno.readTextFile(ws.audit.log);
  await Deno.writeTextFile(ws.audit.log, text.replace('"ops"', '"eve"'));
  await assert.rejects(
    ws.create({ title: "second", role: "backend" }),
    (e) => e instanceof ConflictError && /audit chain does not verify/.test(e.message),
  );
  assert.deepEqual(ws.store.list().map((t) => t.title), ["first"]);
});

Deno.test("BoardTaskSchema refuses hostile forms", () => {
  const cases: [string, unknown][] = [
    ["no title", { role: "backend" }],
    ["an empty title", { title: "", role: "backend" }],
    ["a title over 500 characters", { title: "x".repeat(501), role: "backend" }],
    ["a role with a path in it", { title: "t", role: "../etc" }],
    ["a role with upper case", { title: "t", role: "Backend" }],
    ["a goal over 20000 characters", { title: "t", role: "backend", goal: "g".repeat(20_001) }],
    ["an adapter with a space", { title: "t", role: "backend", cli: "claude --yolo" }],
    ["an adapter that is a path", { title: "t", role: "backend", cli: "/bin/sh" }],
    ["a negative priority", { title: "t", role: "backend", priority: -1 }],
    ["a fractional priority", { title: "t", role: "backend", priority: 1.5 }],
    ["a priority as text", { title: "t", role: "backend", priority: "9" }],
    ["an id chosen by the caller", { title: "t", role: "backend", id: "../../x" }],
    ["depends_on (not a board field)", { title: "t", role: "backend", depends_on: ["a"] }],
    ["not an object", ["title"]],
  ];
  for (const [name, body] of cases) {
    assert.equal(BoardTaskSchema.safeParse(body).success, false, name);
  }
});

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
  await using ws = await workspace();
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
