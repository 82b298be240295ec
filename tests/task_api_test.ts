import assert from "node:assert/strict";
import { parse as parseYaml } from "yaml";
import { testWorkspace } from "./_workspace.ts";
import { onTaskChange, type TaskChange } from "../lib/tasks/changes.ts";

const CONFIG = "cli: claude\nroles:\n  backend: {}\n  qa: {}\n";

Deno.test("POST /tasks creates one task (201, bare task) with every documented field", async () => {
  await using ws = await testWorkspace();
  const r = await ws.call("POST", "/tasks", { id: "a1", title: "Do A", role: "backend" });
  assert.equal(r.status, 201);
  for (
    const key of [
      "id",
      "status",
      "title",
      "role",
      "priority",
      "depends_on",
      "owned_files",
      "verification_count",
      "flagged_unverified",
      "goal",
      "scope",
      "complexity",
      "completion_signals",
      "batch_eligible",
      "session_id",
      "attempts",
      "created_at",
      "updated_at",
      "summary",
    ]
  ) {
    assert.ok(key in r.body, `missing ${key}`);
  }
  assert.equal(r.body.status, "OPEN");
  assert.equal(r.body.priority, 2);
  assert.equal(r.body.scope, "medium");
  const spec = parseYaml(await Deno.readTextFile(`${ws.root}/.sdd/backlog/open/a1.yaml`));
  assert.equal(spec.status, "OPEN");
});

Deno.test("POST /tasks batch: members depend on each other in any order; blocked until deps finish", async () => {
  await using ws = await testWorkspace();
  const r = await ws.call("POST", "/tasks", {
    tasks: [
      { id: "c", title: "C", role: "qa", depends_on: ["b"] },
      { id: "b", title: "B", role: "qa", depends_on: ["a"] },
      { id: "a", title: "A", role: "qa" },
    ],
  });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body.tasks.map((t: { status: string }) => t.status), [
    "BLOCKED",
    "BLOCKED",
    "OPEN",
  ]);
  assert.equal((await ws.call("POST", "/tasks/a/claim", { session_id: "s1" })).status, 200);
  assert.equal((await ws.call("POST", "/tasks/a/complete", { summary: "ok" })).body.status, "DONE");
  assert.equal((await ws.call("GET", "/tasks/b")).body.status, "OPEN");
  assert.equal((await ws.call("GET", "/tasks/c")).body.status, "BLOCKED");
  assert.equal((await ws.call("POST", "/tasks/b/cancel", {})).body.status, "CANCELLED");
  assert.equal((await ws.call("GET", "/tasks/c")).body.status, "OPEN");
});

interface Refusal {
  name: string;
  body: unknown;
  status: number;
  code: string;
}

const REFUSALS: Refusal[] = [
  { name: "malformed JSON", body: "{not json", status: 400, code: "invalid_json" },
  { name: "missing title", body: { role: "backend" }, status: 400, code: "invalid_body" },
  {
    name: "unknown field",
    body: { title: "x", role: "backend", colour: "red" },
    status: 400,
    code: "invalid_body",
  },
  {
    name: "hostile id ../x",
    body: { id: "../x", title: "x", role: "backend" },
    status: 400,
    code: "invalid_body",
  },
  {
    name: "hostile id a/../../b",
    body: { id: "a/../../b", title: "x", role: "backend" },
    status: 400,
    code: "invalid_body",
  },
  {
    name: "id with ..",
    body: { id: "a..b", title: "x", role: "backend" },
    status: 400,
    code: "invalid_body",
  },
  {
    name: "absolute path id",
    body: { id: "/etc/passwd", title: "x", role: "backend" },
    status: 400,
    code: "invalid_body",
  },
  {
    name: "duplicate id",
    body: { id: "dup", title: "x", role: "backend" },
    status: 409,
    code: "duplicate_id",
  },
  {
    name: "duplicate id inside a batch",
    body: { tasks: [{ id: "n1", title: "x", role: "qa" }, { id: "n1", title: "y", role: "qa" }] },
    status: 409,
    code: "duplicate_id",
  },
  {
    name: "unknown role",
    body: { title: "x", role: "painter" },
    status: 422,
    code: "unknown_role",
  },
  {
    name: "unknown dependency",
    body: { title: "x", role: "qa", depends_on: ["ghost"] },
    status: 422,
    code: "unknown_dependency",
  },
  {
    name: "self dependency",
    body: { id: "me", title: "x", role: "qa", depends_on: ["me"] },
    status: 422,
    code: "cyclic_depends_on",
  },
  {
    name: "cycle inside a batch",
    body: {
      tasks: [{ id: "x1", title: "x", role: "qa", depends_on: ["x2"] }, {
        id: "x2",
        title: "y",
        role: "qa",
        depends_on: ["x1"],
      }],
    },
    status: 422,
    code: "cyclic_depends_on",
  },
  {
    name: "bad completion signal",
    body: { title: "x", role: "qa", completion_signals: [{ file_exists: "a" }] },
    status: 400,
    code: "invalid_body",
  },
  { name: "a JSON array", body: [1, 2], status: 400, code: "invalid_body" },
];

for (const r of REFUSALS) {
  Deno.test(`POST /tasks refuses ${r.name} (${r.status}) and creates nothing`, async () => {
    await using ws = await testWorkspace({ config: CONFIG });
    await ws.call("POST", "/tasks", { id: "dup", title: "x", role: "backend" });
    const res = await ws.call("POST", "/tasks", r.body);
    assert.equal(res.status, r.status, JSON.stringify(res.body));
    assert.equal(res.body.error.code, r.code);
    const all = await ws.call("GET", "/tasks");
    assert.deepEqual(all.body.tasks.map((t: { id: string }) => t.id), ["dup"]);
  });
}

const HOSTILE_PATHS = [
  "/tasks/..%2f..%2fetc/claim",
  "/tasks/%2e%2e",
  "/tasks/%2e%2e/claim",
  "/tasks/.hidden",
  "/tasks/a%00b",
];
for (const path of HOSTILE_PATHS) {
  Deno.test(`hostile task id in the path ${path} is refused without touching files`, async () => {
    await using ws = await testWorkspace();
    const method = path.endsWith("claim") ? "POST" : "GET";
    const res = await ws.call(method, path);
    assert.ok(res.status === 400 || res.status === 404, `${res.status}`);
  });
}

Deno.test("GET /tasks?status= filters by the lower-case status and refuses unknown ones", async () => {
  await using ws = await testWorkspace();
  await ws.call("POST", "/tasks", {
    tasks: [{ id: "a", title: "A", role: "qa" }, {
      id: "b",
      title: "B",
      role: "qa",
      depends_on: ["a"],
    }],
  });
  assert.deepEqual(
    (await ws.call("GET", "/tasks?status=blocked")).body.tasks.map((t: { id: string }) => t.id),
    ["b"],
  );
  assert.deepEqual(
    (await ws.call("GET", "/tasks?status=open")).body.tasks.map((t: { id: string }) => t.id),
    ["a"],
  );
  const bad = await ws.call("GET", "/tasks?status=OPENED");
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.code, "invalid_status");
  assert.equal((await ws.call("GET", "/tasks/nope")).status, 404);
});

Deno.test("POST /tasks/next claims by priority then creation order, per role; 204 when none", async () => {
  await using ws = await testWorkspace();
  await ws.call("POST", "/tasks", {
    tasks: [
      { id: "low", title: "l", role: "qa", priority: 3 },
      { id: "first", title: "f", role: "qa", priority: 1 },
      { id: "second", title: "s", role: "qa", priority: 1 },
      { id: "other", title: "o", role: "backend", priority: 0 },
    ],
  });
  const order: string[] = [];
  for (;;) {
    const res = await ws.app.request("/tasks/next?role=qa", { method: "POST" });
    if (res.status === 204) break;
    order.push((await res.json()).id);
  }
  assert.deepEqual(order, ["first", "second", "low"]);
  const other = await ws.call("POST", "/tasks/next?role=backend", { session_id: "w1" });
  assert.equal(other.body.id, "other");
  assert.equal(other.body.session_id, "w1");
  assert.equal(other.body.status, "CLAIMED");
});

Deno.test("a claim of a task that is not OPEN is 409; racing claims have exactly one winner", async () => {
  await using ws = await testWorkspace();
  await ws.call("POST", "/tasks", { id: "t", title: "T", role: "qa" });
  const results = await Promise.all(
    Array.from(
      { length: 32 },
      (_, i) => ws.call("POST", "/tasks/t/claim", { session_id: `s${i}` }),
    ),
  );
  assert.equal(results.filter((r) => r.status === 200).length, 1);
  assert.equal(results.filter((r) => r.status === 409).length, 31);
});

Deno.test("complete: from CLAIMED/IN_PROGRESS, 409 once DONE; outside a run the ledger records what the service observed (nothing), the agent's flags only a hint", async () => {
  await using ws = await testWorkspace();
  await ws.call("POST", "/tasks", {
    tasks: [{ id: "v", title: "V", role: "qa" }, { id: "u", title: "U", role: "qa" }, {
      id: "o",
      title: "O",
      role: "qa",
    }],
  });
  assert.equal((await ws.call("POST", "/tasks/v/complete")).status, 409);
  await ws.call("POST", "/tasks/v/claim", { session_id: "sv" });
  assert.equal((await ws.call("POST", "/tasks/v/heartbeat")).body.status, "IN_PROGRESS");
  const done = await ws.call("POST", "/tasks/v/complete", {
    summary: "did it",
    tests_run: true,
    quality_gates_run: true,
  });
  assert.equal(done.body.status, "DONE");
  // The agent's word alone never verifies a completion.
  assert.equal(done.body.verification_count, 0);
  assert.equal(done.body.flagged_unverified, true);
  assert.deepEqual(done.body.reported_evidence, {
    tests_run: true,
    quality_gates_run: true,
    completion_signals_checked: false,
  });
  assert.equal(done.body.summary, "did it");
  assert.equal((await ws.call("POST", "/tasks/v/complete")).status, 409);
  await ws.call("POST", "/tasks/u/claim", {});
  const unverified = await ws.call("POST", "/tasks/u/complete");
  assert.equal(unverified.body.flagged_unverified, true);
  assert.equal(unverified.body.verification_count, 0);
  const op = await ws.call("POST", "/tasks/o/complete", { operator: true });
  assert.equal(op.body.status, "DONE");
  const lines = (await Deno.readTextFile(`${ws.root}/.sdd/metrics/verification_nudges.jsonl`))
    .trim().split("\n").map((l) => JSON.parse(l));
  assert.deepEqual(lines.map((l) => [l.task_id, l.verified, l.tests_run]), [
    ["v", false, false],
    ["u", false, false],
    ["o", false, false],
  ]);
  assert.equal(lines[0].session_id, "sv");
  assert.equal(typeof lines[0].timestamp, "number");
  const status = await ws.call("GET", "/status");
  assert.equal(status.body.verification_nudge.total_completions, 3);
  assert.equal(status.body.verification_nudge.unverified_count, 3);
  assert.equal(status.body.verification_nudge.threshold_exceeded, true);
  assert.deepEqual(status.body.verification_nudge.recent_unverified, ["o", "u", "v"]);
  assert.equal(status.body.tasks.DONE, 3);
  assert.deepEqual(status.body.agents, []);
  assert.deepEqual(status.body.rate_limits, { cooldowns: [] });
  assert.equal(status.body.spend.total_micro_usd, 0);
  await Deno.remove(`${ws.root}/.sdd/metrics/verification_nudges.jsonl`);
  assert.equal((await ws.call("GET", "/status")).body.verification_nudge.total_completions, 0);
});

Deno.test("fail, cancel and the file moves between backlog directories", async () => {
  await using ws = await testWorkspace();
  await ws.call("POST", "/tasks", {
    tasks: [{ id: "f", title: "F", role: "qa" }, { id: "c", title: "C", role: "qa" }],
  });
  await ws.call("POST", "/tasks/f/claim");
  await Deno.stat(`${ws.root}/.sdd/backlog/claimed/f.yaml`);
  await assert.rejects(Deno.stat(`${ws.root}/.sdd/backlog/open/f.yaml`), Deno.errors.NotFound);
  assert.equal(
    (await ws.call("POST", "/tasks/f/fail", { reason: "tests red" })).body.status,
    "FAILED",
  );
  await Deno.stat(`${ws.root}/.sdd/backlog/closed/f.yaml`);
  assert.equal((await ws.call("POST", "/tasks/c/cancel")).body.status, "CANCELLED");
  assert.equal((await ws.call("POST", "/tasks/c/cancel")).status, 409);
});

Deno.test("heartbeats stop for heartbeat_timeout_s: the task is ORPHANED, reopen requeues it", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  await using ws = await testWorkspace({
    config: "cli: claude\nroles: [qa]\nheartbeat_timeout_s: 45\n",
    clock: () => now,
  });
  await ws.call("POST", "/tasks", { id: "h", title: "H", role: "qa" });
  assert.equal((await ws.call("POST", "/tasks/h/reopen")).status, 409);
  await ws.call("POST", "/tasks/h/claim", { session_id: "agent-1" });
  const { taskStoreFor } = await import("../lib/tasks/registry.ts");
  const store = await taskStoreFor(ws.ctx);
  now += 30_000;
  await ws.call("POST", "/tasks/h/heartbeat");
  now += 44_000;
  assert.deepEqual(await store.sweepOrphans(), []);
  now += 1_000;
  assert.deepEqual((await store.sweepOrphans()).map((t) => t.id), ["h"]);
  assert.equal((await ws.call("GET", "/tasks?status=orphaned")).body.tasks[0].id, "h");
  assert.equal((await ws.call("POST", "/tasks/h/heartbeat")).status, 409);
  const reopened = await ws.call("POST", "/tasks/h/reopen");
  assert.equal(reopened.body.status, "OPEN");
  assert.equal(reopened.body.session_id, null);
  assert.equal((await ws.call("POST", "/tasks/next?role=qa")).body.attempts, 2);
});

Deno.test("a claimant whose lease ran out and whose task another session holds now is refused on heartbeat too (409 stale_session): it renews nothing", async () => {
  let now = Date.parse("2026-01-01T00:00:00Z");
  await using ws = await testWorkspace({
    config: "cli: claude\nroles: [qa]\nheartbeat_timeout_s: 45\n",
    clock: () => now,
  });
  await ws.call("POST", "/tasks", { id: "h", title: "H", role: "qa" });
  await ws.call("POST", "/tasks/h/claim", { session_id: "old" });
  const { taskStoreFor } = await import("../lib/tasks/registry.ts");
  const store = await taskStoreFor(ws.ctx);
  now += 46_000;
  await store.sweepOrphans();
  await ws.call("POST", "/tasks/h/reopen");
  await ws.call("POST", "/tasks/h/claim", { session_id: "new" });
  const renewedAt = (await ws.call("GET", "/tasks/h")).body.heartbeat_at;
  now += 10_000;
  const stale = await ws.call("POST", "/tasks/h/heartbeat", { session_id: "old" });
  assert.equal(stale.status, 409);
  assert.equal(stale.body.error.code, "stale_session");
  assert.match(stale.body.error.message, /held by session new, not old/);
  const after = (await ws.call("GET", "/tasks/h")).body;
  assert.equal(after.status, "CLAIMED", "the stale heartbeat changed nothing");
  assert.equal(after.heartbeat_at, renewedAt, "nor renewed the new session's lease");
  // The holder's own heartbeat, with or without its session id, renews it.
  assert.equal((await ws.call("POST", "/tasks/h/heartbeat", { session_id: "new" })).status, 200);
  assert.equal((await ws.call("POST", "/tasks/h/heartbeat")).body.status, "IN_PROGRESS");
  assert.equal((await ws.call("POST", "/tasks/h/heartbeat", { session_id: 7 })).status, 400);
});

Deno.test("onTaskChange() publishes creations and status changes", async () => {
  await using ws = await testWorkspace();
  const seen: TaskChange[] = [];
  const off = onTaskChange((c) => c.workspace === ws.root && seen.push(c));
  try {
    await ws.call("POST", "/tasks", { id: "e", title: "E", role: "qa" });
    await ws.call("POST", "/tasks/e/claim");
  } finally {
    off();
  }
  assert.deepEqual(seen.map((c) => [c.from, c.to]), [[null, "OPEN"], ["OPEN", "CLAIMED"]]);
});

Deno.test("the store reloads from the YAML specs and the export lists every task", async () => {
  await using ws = await testWorkspace();
  await ws.call("POST", "/tasks", {
    tasks: [{ id: "a", title: "A", role: "qa" }, {
      id: "b",
      title: "B",
      role: "qa",
      depends_on: ["a"],
    }],
  });
  await ws.call("POST", "/tasks/a/claim");
  await ws.flush();
  const exported = JSON.parse(await Deno.readTextFile(`${ws.root}/.sdd/runtime/task-backlog.json`));
  assert.deepEqual(exported.tasks.map((t: { id: string; status: string }) => [t.id, t.status]), [[
    "a",
    "CLAIMED",
  ], ["b", "BLOCKED"]]);
  // A fresh store over the same files (the flush closed the first one).
  const again = await ws.call("GET", "/tasks");
  assert.deepEqual(again.body.tasks.map((t: { id: string; status: string }) => [t.id, t.status]), [[
    "a",
    "CLAIMED",
  ], ["b", "BLOCKED"]]);
  const access = (await Deno.readTextFile(`${ws.root}/.sdd/runtime/access.jsonl`)).trim().split(
    "\n",
  ).map((l) => JSON.parse(l));
  assert.deepEqual(Object.keys(access[0]).sort(), [
    "method",
    "ms",
    "path",
    "principal",
    "status",
    "ts",
  ]);
  assert.equal(access[0].status, 201);
  assert.equal(access[0].principal, "dashboard-operator");
});

Deno.test("with tokens configured the task API needs a bearer token and operator actions need scope operator", async () => {
  await using ws = await testWorkspace({
    config:
      "cli: claude\nroles: [qa]\nauth:\n  tokens:\n    - {principal: op, scope: operator, token_env: T_OP_TOKEN}\n    - {principal: bot, scope: reader, token_env: T_READER_TOKEN}\n",
  });
  Deno.env.set("T_OP_TOKEN", "op-secret");
  Deno.env.set("T_READER_TOKEN", "reader-secret");
  try {
    const { appContext } = await import("../lib/server/serve.ts");
    const { loadWorkspaceConfig } = await import("../lib/config/load.ts");
    const { createApp } = await import("../routes/_app.ts");

    const { closeTaskStore } = await import("../lib/tasks/registry.ts");
    const { server: settings } = await loadWorkspaceConfig(ws.root);
    const ctx = appContext(ws.root, settings.tokens);
    const app = createApp(ctx);
    try {
      assert.equal((await app.request("/tasks")).status, 401);
      const op = { authorization: "Bearer op-secret", "content-type": "application/json" };
      const reader = { authorization: "Bearer reader-secret", "content-type": "application/json" };
      const created = await app.request("/tasks", {
        method: "POST",
        headers: op,
        body: JSON.stringify({ id: "k", title: "K", role: "qa" }),
      });
      assert.equal(created.status, 201);
      await created.body?.cancel();
      const refused = await app.request("/tasks/k/cancel", { method: "POST", headers: reader });
      assert.equal(refused.status, 403);
      await refused.body?.cancel();
      const cancelled = await app.request("/tasks/k/cancel", { method: "POST", headers: op });
      assert.equal(cancelled.status, 200);
      await cancelled.body?.cancel();
    } finally {
      await closeTaskStore(ctx);
    }
  } finally {
    Deno.env.delete("T_OP_TOKEN");
    Deno.env.delete("T_READER_TOKEN");
  }
});

Deno.test("POST /tasks: evidence producers are kept on the task; a bad producer is a 400 naming it", async () => {
  await using ws = await testWorkspace();
  const r = await ws.call("POST", "/tasks", {
    id: "e1",
    title: "With evidence",
    role: "qa",
    evidence: [{ name: "tests", command: "deno task test", timeout_s: 120 }, {
      name: "lint",
      command: "deno lint",
    }],
  });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body.evidence, [
    { name: "tests", command: "deno task test", timeout_s: 120 },
    { name: "lint", command: "deno lint", timeout_s: 600 },
  ]);
  assert.equal(r.body.reported_evidence, null);
  const plain = await ws.call("POST", "/tasks", { id: "e2", title: "Without", role: "qa" });
  assert.deepEqual(plain.body.evidence, []);
  for (
    const [evidence, where] of [
      [[{ command: "x" }], /evidence\[0\]\.name: expected string/],
      [[{ name: "a", command: "x" }, { name: "a", command: "y" }], /duplicate name a/],
      [[{ name: "a", command: "x", timeout_s: -1 }], /timeout_s/],
    ] as const
  ) {
    const bad = await ws.call("POST", "/tasks", { title: "Bad", role: "qa", evidence });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.match(bad.body.error.message, where);
  }
});

Deno.test("POST /tasks: a task that does not say takes service.yaml's top-level batch_eligible", async () => {
  await using ws = await testWorkspace({ config: CONFIG + "batch_eligible: true\n" });
  const r = await ws.call("POST", "/tasks", {
    tasks: [
      { id: "d", title: "Default", role: "backend" },
      { id: "n", title: "No", role: "backend", batch_eligible: false },
    ],
  });
  assert.equal(r.status, 201);
  assert.deepEqual(r.body.tasks.map((t: { batch_eligible: boolean }) => t.batch_eligible), [
    true,
    false,
  ]);
});
