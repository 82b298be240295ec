/**
 * What a worker token may do (DESIGN.md §16, §17, docs/security.md): register and claim for its
 * own worker name, and nothing an operator does — no task creation, review, merge, cancel,
 * retry, reopen or operator completion; a session's heartbeat and report take the capability its
 * claim carried, which speaks for that one session and does nothing else.
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
    - {principal: ops, scope: operator, token_env: WS_OP_TOKEN}
    - {principal: box-1, scope: worker, token_env: WS_BOX1_TOKEN}
    - {principal: box-2, scope: worker, token_env: WS_BOX2_TOKEN}
`;

Deno.test("a worker token registers and claims for its own name only; each session's heartbeat and report take that session's capability", async () => {
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
      ...(method === "GET" ? {} : { body: JSON.stringify(body ?? {}) }),
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
    // w1 holds k as session s-1. Its heartbeat and report take the capability the claim
    // carried for s-1 alone: no configured token, not even the operator's, speaks for it.
    const store = await taskStoreFor(ctx);
    await store.claim("k", "s-1", "w1");
    const cap = mintWorkerSessionCredential(dir.path, {
      runId: "r1",
      taskId: "k",
      sessionId: "s-1",
      worker: "w1",
    });
    const beatBody = { task_id: "k" };
    const reportBody = {
      task_id: "k",
      session_id: "s-1",
      exit_code: 0,
      duration_ms: 1,
      commit: null,
    };
    for (const token of ["b1", "b2", "op"]) {
      const beat = await call(token, "POST", "/workers/w1/sessions/s-1/heartbeat", beatBody);
      assert.equal(beat.status, 403, `${token} cannot heartbeat a session`);
      assert.match(beat.body.error.message, /capability its claim's answer carried/);
      const report = await call(token, "POST", "/workers/w1/sessions/s-1/report", reportBody);
      assert.equal(report.status, 403, `${token} cannot report a session`);
    }
    // The capability speaks for its worker's session only, and does nothing else.
    const refused: [string, string, unknown, number][] = [
      ["POST", "/workers/w2/sessions/s-1/heartbeat", beatBody, 403],
      ["POST", "/workers/w1/sessions/s-2/heartbeat", beatBody, 403],
      ["POST", "/workers/w1/sessions/s-1/heartbeat", { task_id: "other" }, 403],
      ["POST", "/workers/w1/sessions/s-1/report", { ...reportBody, session_id: "s-2" }, 403],
      ["POST", "/workers/w1/claim", { free: 1 }, 403],
      ["POST", "/workers/w1/register", { slots: 1 }, 403],
      ["GET", "/tasks", undefined, 403],
      ["POST", "/tasks/k/complete", {}, 403],
    ];
    for (const [method, path, body, status] of refused) {
      assert.equal((await call(cap, method, path, body)).status, status, `${method} ${path}`);
    }
    const forged = "svcsession_" + "0".repeat(64);
    assert.equal(
      (await call(forged, "POST", "/workers/w1/sessions/s-1/heartbeat", beatBody)).status,
      401,
    );
    // Its own session renews; with no run live a report is asked to come again, not lost.
    const own = await call(cap, "POST", "/workers/w1/sessions/s-1/heartbeat", beatBody);
    assert.equal(own.status, 200);
    assert.equal(own.body.keep, true);
    assert.equal(store.get("k")!.status, "IN_PROGRESS");
    const later = await call(cap, "POST", "/workers/w1/sessions/s-1/report", reportBody);
    assert.equal(later.status, 503);
    // A capability minted for w2's session on a task w1 holds renews nothing: 409-like verdict.
    const w2cap = mintWorkerSessionCredential(dir.path, {
      runId: "r1",
      taskId: "k",
      sessionId: "s-9",
      worker: "w2",
    });
    const notHeld = await call(w2cap, "POST", "/workers/w2/sessions/s-9/heartbeat", beatBody);
    assert.equal(notHeld.body.keep, false);
    assert.match(notHeld.body.reason, /no longer held by session s-9 on worker w2/);
    const lateReport = await call(w2cap, "POST", "/workers/w2/sessions/s-9/report", {
      ...reportBody,
      session_id: "s-9",
    });
    assert.equal(lateReport.status, 409);
    assert.equal(lateReport.body.error.code, "lease_expired");
    // A stale agent of another session cannot complete the task held by s-1.
    const stale = await call("b1", "POST", "/tasks/k/complete", { session_id: "s-0" });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error.code, "stale_session");
  } finally {
    await closeTaskStore(ctx);
  }
});
