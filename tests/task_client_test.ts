/**
 * The task client (lib/tasks/client.ts) against a real loopback server: a read the server refuses
 * for now (503 + Retry-After, its overload answer) is asked again; a write is never sent twice; a
 * server that is not there is TaskStoreUnavailable with the fix.
 */
import assert from "node:assert/strict";
import { HttpApiError } from "../lib/http/api_error.ts";
import { TaskClient, TaskStoreUnavailable } from "../lib/tasks/client.ts";

Deno.test("TaskClient: a busy server's 503 with Retry-After is asked again for a read, never for a write", async () => {
  const seen: string[] = [];
  let busy = 1;
  await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("authorization")}`);
    if (busy-- > 0) {
      return Response.json({ error: { code: "server_busy", message: "too many connections" } }, {
        status: 503,
        headers: { "retry-after": "0" },
      });
    }
    return Response.json({ service: "service" });
  });
  const client = new TaskClient({ url: `http://127.0.0.1:${server.addr.port}/`, token: "t0ken" });
  assert.deepEqual(await client.status(), { service: "service" });
  assert.deepEqual(seen, ["GET /status Bearer t0ken", "GET /status Bearer t0ken"]);
  seen.length = 0;
  busy = 1;
  const e = await client.claimNext("backend").then(() => assert.fail("claimed"), (e) => e);
  assert.ok(e instanceof HttpApiError);
  assert.equal(e.status, 503);
  assert.match(
    e.message,
    /^the task server answered POST http:\/\/127\.0\.0\.1:\d+\/tasks\/next with HTTP 503 server_busy: too many connections$/,
  );
  assert.deepEqual(seen, ["POST /tasks/next Bearer t0ken"], "a claim is not sent twice");
});

Deno.test("TaskClient: no server is TaskStoreUnavailable naming where and how to start one", async () => {
  const client = new TaskClient({ url: "http://127.0.0.1:9", token: "" });
  const e = await client.status().then(() => assert.fail("answered"), (e) => e);
  assert.ok(e instanceof TaskStoreUnavailable);
  assert.match(e.message, /connection refused at http:\/\/127\.0\.0\.1:9/);
});
