/**
 * What a worker token may do (DESIGN.md §16, docs/security.md): claim, heartbeat and report for
 * its own worker name, and nothing an operator does — no task creation, review, merge, cancel,
 * retry, reopen or operator completion; one worker cannot speak for another's name or sessions.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appContext } from "../lib/server/serve.ts";
import { loadWorkspaceConfig } from "../lib/config/load.ts";
import { closeTaskStore, taskStoreFor } from "../lib/tasks/registry.ts";
import { createApp } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { withEnv } from "./_e2e.ts";

const CONFIG = `cli: claude
roles: [backend]
auth:
  tokens:
    - {principal: ops, scope: operator, token_env: WS_OP_TOKEN}
    - {principal: box-1, scope: worker, token_env: WS_BOX1_TOKEN}
    - {principal: box-2, scope: worker, token_env: WS_BOX2_TOKEN}
`;

Deno.test("a worker token claims and reports for its own name only, and can do nothing an operator does", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "service.yaml"), CONFIG);
  using _env = withEnv({ WS_OP_TOKEN: "op", WS_BOX1_TOKEN: "b1", WS_BOX2_TOKEN: "b2" });
  const { server } = await loadWorkspaceConfig(dir.path);
  const ctx = appContext(dir.path, server.tokens);
  const app = createApp(ctx);
  const call = async (token: string, method: string, path: string, body: unknown = {}) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(method === "GET" ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  try {
    assert.equal(
      (await call("op", "POST", "/tasks", { id: "k", title: "K", role: "backend" })).status,
      201,
    );
    // Nothing an operator does.
    assert.equal((await call("b1", "POST", "/tasks", { title: "x", role: "backend" })).status, 403);
    for (const action of ["cancel", "retry", "reopen"]) {
      assert.equal((await call("b1", "POST", `/tasks/k/${action}`)).status, 403, action);
    }
    assert.equal((await call("b1", "POST", "/tasks/k/complete", { operator: true })).status, 403);
    for (const decision of ["approve", "merge", "request_changes"]) {
      const review = await call(
        "b1",
        "POST",
        "/dashboard/review-board/runs/r1/tasks/k/review",
        { decision },
      );
      assert.equal(review.status, 403, decision);
    }
    // Its own name: registered, bound to its principal; another principal cannot take it.
    const registered = await call("b1", "POST", "/workers/w1/register", { slots: 2 });
    assert.equal(registered.status, 200);
    assert.equal(registered.body.run_id, null, "no run is live");
    const taken = await call("b2", "POST", "/workers/w1/register", { slots: 1 });
    assert.equal(taken.status, 403);
    assert.equal(taken.body.error.code, "worker_name_taken");
    assert.equal((await call("b2", "POST", "/workers/w1/claim", { free: 1 })).status, 403);
    // w1 holds k; box-2 under its own name cannot renew, end or report it.
    const store = await taskStoreFor(ctx);
    await store.claim("k", "s-1", "w1");
    const beat = await call("b2", "POST", "/workers/w2/heartbeat", {
      sessions: [{ task_id: "k", session_id: "s-1" }],
    });
    assert.equal(beat.body.sessions[0].keep, false);
    assert.match(beat.body.sessions[0].reason, /no longer held by session s-1 on worker w2/);
    const report = await call("b2", "POST", "/workers/w2/report", {
      task_id: "k",
      session_id: "s-1",
      exit_code: 0,
      duration_ms: 1,
      commit: null,
    });
    assert.equal(report.status, 409);
    assert.equal(report.body.error.code, "lease_expired");
    // Its own session renews; with no run live a report is asked to come again, not lost.
    const own = await call("b1", "POST", "/workers/w1/heartbeat", {
      sessions: [{ task_id: "k", session_id: "s-1" }],
    });
    assert.equal(own.body.sessions[0].keep, true);
    assert.equal(store.get("k")!.status, "IN_PROGRESS");
    const later = await call("b1", "POST", "/workers/w1/report", {
      task_id: "k",
      session_id: "s-1",
      exit_code: 0,
      duration_ms: 1,
      commit: null,
    });
    assert.equal(later.status, 503);
    // A stale agent of another session cannot complete the task held by s-1.
    const stale = await call("b1", "POST", "/tasks/k/complete", { session_id: "s-0" });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, "stale_session");
  } finally {
    await closeTaskStore(ctx);
  }
});
