/**
 * What `service workers` (`GET /workers`) says a worker runs. Found in a team trial: a worker
 * whose last agent had reported stayed `busy` with RUNNING 1 for good — the count was taken only
 * from heartbeats, and a worker running nothing sends none; its next claims (free 2 of 2) did not
 * correct it.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appContext } from "../lib/server/serve.ts";
import { loadWorkspaceConfig } from "../lib/config/load.ts";
import { closeTaskStore, taskStoreFor } from "../lib/tasks/registry.ts";
import { createApp } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { withEnv } from "./_e2e.ts";
import { mintWorkerSessionCredential } from "../lib/auth/agent_credentials.ts";

const CONFIG = `cli: claude
roles: [backend]
auth:
  tokens:
    - {principal: ops, scope: operator, token_env: RC_OP_TOKEN}
    - {principal: box-1, scope: worker, token_env: RC_BOX1_TOKEN}
`;

Deno.test("a worker whose agents all ended is idle with nothing running at its next claim, not busy with the count of its last heartbeat", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "service.yaml"), CONFIG);
  using _env = withEnv({ RC_OP_TOKEN: "op", RC_BOX1_TOKEN: "b1" });
  const { server } = await loadWorkspaceConfig(dir.path);
  const ctx = appContext(dir.path, server.tokens);
  const app = createApp(ctx);
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const box1 = async () => {
    const { body } = await call("op", "GET", "/workers");
    return (body.workers as { name: string; running: number; state: string; free: number }[])
      .find((w) => w.name === "w1")!;
  };
  try {
    assert.equal((await call("b1", "POST", "/workers/w1/register", { slots: 2 })).status, 200);
    assert.equal(
      (await call("op", "POST", "/tasks", { id: "k", title: "K", role: "backend" })).status,
      201,
    );
    // w1's agent runs k as session s-1 and heartbeats: one running, busy.
    const store = await taskStoreFor(ctx);
    await store.claim("k", "s-1", "w1");
    const cap = mintWorkerSessionCredential(dir.path, {
      runId: "r1",
      taskId: "k",
      sessionId: "s-1",
      worker: "w1",
    });
    const beat = await call(cap, "POST", "/workers/w1/sessions/s-1/heartbeat", { task_id: "k" });
    assert.equal(beat.status, 200);
    assert.equal((await box1()).running, 1);
    assert.equal((await box1()).state, "busy");
    // Its agent completed; the worker, running nothing, sends no heartbeat and asks for work.
    const done = await call("op", "POST", "/tasks/k/complete", { session_id: "s-1" });
    assert.equal(done.body.status, "DONE");
    const claim = await call("b1", "POST", "/workers/w1/claim", { free: 2 });
    assert.equal(claim.status, 204, "no run is live: nothing to take");
    const after = await box1();
    assert.equal(after.running, 0, JSON.stringify(after));
    assert.equal(after.free, 2);
    assert.equal(after.state, "idle");
  } finally {
    await closeTaskStore(ctx);
  }
});
