/**
 * A worker token on the plain task API (docs/workers.md "Tokens"): it serves the shared backlog,
 * tasks of no run; a run's tasks reach a worker only through `POST /workers/<name>/claim` and are
 * reported only with that claim's session capability. Found in a team trial: `box-3`'s token
 * claimed a task of the live run through `POST /tasks/<id>/claim` and completed it with nothing
 * pushed — the task sat DONE with no journal row, and the run could not land or end it; the same
 * token could complete or fail the task another worker's agent was running.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appContext } from "../lib/server/serve.ts";
import { loadWorkspaceConfig } from "../lib/config/load.ts";
import { closeTaskStore, taskStoreFor } from "../lib/tasks/registry.ts";
import { createApp } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { withEnv } from "./_e2e.ts";
import { TaskInputSchema } from "../lib/tasks/task.ts";

const CONFIG = `cli: claude
roles: [backend]
auth:
  tokens:
    - {principal: ops, scope: operator, token_env: TG_OP_TOKEN}
    - {principal: box-1, scope: worker, token_env: TG_BOX1_TOKEN}
    - {principal: box-3, scope: worker, token_env: TG_BOX3_TOKEN}
`;

Deno.test("a worker token takes and reports only backlog tasks through the plain task API; a run's tasks are refused with run_task and stay as they were", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "service.yaml"), CONFIG);
  using _env = withEnv({ TG_OP_TOKEN: "op", TG_BOX1_TOKEN: "b1", TG_BOX3_TOKEN: "b3" });
  const { server } = await loadWorkspaceConfig(dir.path);
  const ctx = appContext(dir.path, server.tokens);
  const app = createApp(ctx);
  const call = async (token: string, path: string, body: unknown = {}) => {
    const res = await app.request(path, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  try {
    const store = await taskStoreFor(ctx);
    // Two tasks of run r1 (the first one first in line), one of the shared backlog.
    await store.create(
      [
        { id: "open-of-run", title: "A", role: "backend", priority: 1 },
        { id: "held-of-run", title: "B", role: "backend", priority: 1 },
      ].map((t) => TaskInputSchema.parse(t)),
      { runId: "run-1" },
    );
    assert.equal(
      (await call("op", "/tasks", { id: "backlog", title: "C", role: "backend", priority: 5 }))
        .status,
      201,
    );
    // Another worker's agent runs held-of-run as session s-1 (claimed through its desk).
    await store.claim("held-of-run", "s-1", "box-1");

    const refused: [string, string, unknown][] = [
      ["claim an open task of the run", "/tasks/open-of-run/claim", { session_id: "x-1" }],
      ["complete another worker's task", "/tasks/held-of-run/complete", { summary: "hostile" }],
      ["complete it naming the session", "/tasks/held-of-run/complete", { session_id: "s-1" }],
      ["fail another worker's task", "/tasks/held-of-run/fail", { reason: "hostile" }],
      ["renew another worker's lease", "/tasks/held-of-run/heartbeat", { session_id: "s-1" }],
    ];
    for (const [what, path, body] of refused) {
      const answer = await call("b3", path, body);
      assert.equal(answer.status, 403, `${what}: ${JSON.stringify(answer.body)}`);
      assert.equal(answer.body.error.code, "run_task", what);
      assert.match(
        answer.body.error.message,
        /belongs to run run-1.*POST \/workers\/<name>\/claim/,
      );
    }
    // /tasks/next passes over the run's tasks (first in line) and takes the backlog's.
    const next = await call("b3", "/tasks/next", { session_id: "x-2" });
    assert.equal(next.status, 200);
    assert.equal(next.body.id, "backlog");
    assert.equal((await call("b3", "/tasks/next", {})).status, 204, "nothing else for it");
    // Nothing of the run was written: still OPEN, still held by s-1, no attempt counted.
    assert.equal(store.get("open-of-run")!.status, "OPEN");
    assert.equal(store.get("open-of-run")!.attempts, 0);
    assert.equal(store.get("held-of-run")!.status, "CLAIMED");
    assert.equal(store.get("held-of-run")!.session_id, "s-1");
    assert.equal(store.get("held-of-run")!.summary, null);
    // The run's tasks stay ready for their own claimants (an operator's /tasks/next here).
    const op = await call("op", "/tasks/next", {});
    assert.equal(op.body.id, "open-of-run");
    // The backlog task is the worker's to report, as before.
    const done = await call("b3", "/tasks/backlog/complete", { session_id: "x-2" });
    assert.equal(done.status, 200);
    assert.equal(done.body.status, "DONE");
  } finally {
    await closeTaskStore(ctx);
  }
});
