import assert from "node:assert/strict";
import { auditPaths, verifyAuditFile } from "../audit/store.ts";
import { ConflictError, UnprocessableError } from "../errors.ts";
import { sha256Hex } from "../journal/hash.ts";
import { TaskStore } from "../tasks/store.ts";
import { workspacePaths } from "../workspace.ts";
import { BoardTaskSchema, createBoardTask, TASK_CREATED_EVENT } from "./new_task.ts";

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
