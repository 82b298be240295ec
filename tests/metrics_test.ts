/**
 * `GET /metrics`, `/healthz` and `/readyz` (DESIGN.md §17) on a real server on loopback and in
 * process: Prometheus text that promtool accepts, zeros with no run, reader scope for the metrics,
 * public one-word probes that say 503 when the server's loop is stuck or it shuts down.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { appContext, startServer } from "../lib/server/serve.ts";
import { loadWorkspaceConfig } from "../lib/config/load.ts";
import { closeTaskStore, taskStoreFor } from "../lib/tasks/registry.ts";
import { mintWorkerSessionCredential } from "../lib/auth/agent_credentials.ts";
import { createApp, SERVER_APP } from "../routes/_app.ts";
import { tempDir } from "./helpers.ts";
import { withEnv } from "./_e2e.ts";
import { promtoolCheck } from "./_promtool.ts";
import { WORKER_READ, WORKER_TOKENS } from "./_workers.ts";

const CONFIG = `cli: claude
roles: [backend, docs]
`;

Deno.test("`service serve` with no run: /metrics is Prometheus text promtool accepts, every gauge 0", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(join(dir.path, "service.yaml"), CONFIG);
  const server = await startServer({
    root: dir.path,
    host: "127.0.0.1",
    port: 0,
    // A worker token: a server takes workers only when one is configured.
    tokens: WORKER_TOKENS,
    announce: false,
    app: SERVER_APP,
  });
  try {
    const res = await fetch(`${server.url}/metrics`, { headers: WORKER_READ });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    const text = await res.text();
    await promtoolCheck(text);
    for (
      const line of [
        "service_run_live 0",
        'service_tasks_ready{role="backend"} 0',
        'service_tasks_ready{role="docs"} 0',
        'service_tasks_running{where="local"} 0',
        'service_tasks_running{where="remote"} 0',
        "service_workers 0",
        "service_worker_slots_free 0",
        "service_landing_queue 0",
        "service_leases_lost_total 0",
      ]
    ) assert.ok(text.split("\n").includes(line), `${line} in:\n${text}`);
    for (const [path, word] of [["/healthz", "ok"], ["/readyz", "ready"]]) {
      const probe = await fetch(`${server.url}${path}`);
      assert.equal(probe.status, 200, path);
      assert.equal(await probe.text(), `${word}\n`);
    }
    // A worker that registers is counted with its free slots until it leaves.
    const call = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...WORKER_READ },
        body: JSON.stringify(body),
      }).then(async (r) => (await r.body?.cancel(), r.status));
    assert.equal(await call("/workers/w1/register", { slots: 3 }), 200);
    const counted = await (await fetch(`${server.url}/metrics`, { headers: WORKER_READ })).text();
    assert.match(counted, /\nservice_workers 1\n/);
    assert.match(counted, /\nservice_worker_slots_free 3\n/);
    assert.equal(await call("/workers/w1/leave", {}), 204);
    assert.match(
      await (await fetch(`${server.url}/metrics`, { headers: WORKER_READ })).text(),
      /\nservice_workers 0\n/,
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("/metrics needs a reader token once tokens are set; the probes are public and say one word", async () => {
  await using dir = await tempDir();
  await Deno.writeTextFile(
    join(dir.path, "service.yaml"),
    CONFIG +
      "auth:\n  tokens:\n    - {principal: prom, scope: reader, token_env: MT_READ}\n" +
      "    - {principal: box, scope: worker, token_env: MT_BOX}\n",
  );
  using _env = withEnv({ MT_READ: "r", MT_BOX: "b" });
  const { server } = await loadWorkspaceConfig(dir.path);
  const ctx = appContext(dir.path, server.tokens);
  await taskStoreFor(ctx);
  const app = createApp(ctx);
  const get = async (path: string, token?: string) => {
    const res = await app.request(path, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
    });
    return { status: res.status, text: await res.text() };
  };
  try {
    assert.equal((await get("/metrics")).status, 401);
    assert.equal((await get("/metrics", "r")).status, 200);
    assert.equal((await get("/metrics", "b")).status, 200, "a worker reads what a reader reads");
    const cap = mintWorkerSessionCredential(dir.path, {
      runId: "r",
      taskId: "t",
      sessionId: "s",
      worker: "w",
    });
    assert.equal((await get("/metrics", cap)).status, 403, "a session capability reads nothing");
    assert.deepEqual(await get("/healthz"), { status: 200, text: "ok\n" });
    assert.deepEqual(await get("/readyz"), { status: 200, text: "ready\n" });
    // The server's background tick has not finished for two minutes: the loop is stuck.
    ctx.ticked = { at: Date.now() - 120_000, everyMs: 1000 };
    assert.deepEqual(await get("/healthz"), { status: 503, text: "stuck\n" });
    ctx.ticked = { at: Date.now(), everyMs: 1000 };
    assert.deepEqual(await get("/healthz"), { status: 200, text: "ok\n" });
    const closing = new AbortController();
    closing.abort();
    const stopping = createApp({ ...ctx, closing: closing.signal });
    const res = await stopping.request("/readyz");
    assert.deepEqual([res.status, await res.text()], [503, "stopping\n"]);
  } finally {
    await closeTaskStore(ctx);
  }
});
