/**
 * Every command finds its own workspace's server, however it was started, and checks that
 * server's identity before trusting an answer: real `cli.ts serve` processes in two workspaces
 * on different ports, and the real CLI in each.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { CLI, runDeno, startServing, tempDir } from "./helpers.ts";

const run = (root: string, ...args: string[]) =>
  runDeno(["run", "-A", CLI, "--root", root, ...args]);

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function workspaceDir(dir: string, name: string, config = ""): Promise<string> {
  const root = join(dir, name);
  await Deno.mkdir(root);
  await Deno.writeTextFile(join(root, "service.yaml"), `cli: claude\nroles: [backend]\n${config}`);
  return root;
}

async function post(url: string, body: unknown = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  assert.ok(res.ok, JSON.stringify(answer));
  return answer;
}

/** A FAILED task `id` on the server at `url`. */
async function failedTask(url: string, id: string): Promise<void> {
  await post(`${url}/tasks`, { id, title: id, role: "backend" });
  await post(`${url}/tasks/${id}/claim`, { session_id: `s-${id}` });
  await post(`${url}/tasks/${id}/fail`, { reason: "broke" });
}

const statusOf = async (url: string, id: string) =>
  (await (await fetch(`${url}/tasks/${id}`)).json()).status;

Deno.test("two workspaces with servers on different ports: each command talks to its own server", async () => {
  await using dir = await tempDir();
  const a = await workspaceDir(dir.path, "a");
  const b = await workspaceDir(dir.path, "b");
  await using serverA = await startServing([CLI, "--root", a, "serve", "--port", "0"]);
  await using serverB = await startServing([CLI, "--root", b, "serve", "--port", "0"]);
  await failedTask(serverA.url, "only-in-a");
  await failedTask(serverB.url, "only-in-b");
  await post(`${serverB.url}/tasks`, { id: "b-open", title: "b", role: "backend" });

  const statusA = await run(a, "status");
  assert.equal(statusA.code, 0, statusA.text);
  assert.match(statusA.text, new RegExp(`server ${serverA.url}`));
  assert.match(statusA.text, /tasks: 1 \(failed 1\)/);
  const statusB = JSON.parse((await run(b, "status", "--json")).text);
  assert.equal(statusB.tasks.total, 2);

  const retried = await run(a, "retry", "only-in-a");
  assert.equal(retried.code, 0, retried.text);
  assert.equal(await statusOf(serverA.url, "only-in-a"), "OPEN");
  const cancelled = await run(b, "cancel", "b-open");
  assert.equal(cancelled.code, 0, cancelled.text);
  assert.equal(await statusOf(serverB.url, "b-open"), "CANCELLED");
  assert.equal(await statusOf(serverB.url, "only-in-b"), "FAILED", "a's retry never reached b");
  const wrong = await run(a, "retry", "only-in-b");
  assert.equal(wrong.code, 1);
  assert.match(wrong.text, /only-in-b: no such task/);
});

Deno.test("service serve --port N, then service retry in the same workspace goes to port N", async () => {
  await using dir = await tempDir();
  const root = await workspaceDir(dir.path, "ws");
  const port = freePort();
  await using server = await startServing([CLI, "--root", root, "serve", "--port", String(port)]);
  assert.equal(server.url, `http://127.0.0.1:${port}`);
  await failedTask(server.url, "x");
  const retried = await run(root, "retry", "x");
  assert.equal(retried.code, 0, retried.text);
  assert.match(retried.text, /x: OPEN again \(was FAILED\)/);
  assert.equal(await statusOf(server.url, "x"), "OPEN");
});

Deno.test("a server of another workspace on this workspace's port is never reported as this one's", async () => {
  await using dir = await tempDir();
  const port = freePort();
  const other = await workspaceDir(dir.path, "other");
  const mine = await workspaceDir(dir.path, "mine", `port: ${port}\n`);
  await using server = await startServing([CLI, "--root", other, "serve", "--port", String(port)]);
  await failedTask(server.url, "theirs");

  const status = await run(mine, "status");
  assert.equal(status.code, 0, status.text);
  assert.match(status.text, /workspace files; no server running for this workspace/);
  assert.doesNotMatch(status.text, /theirs|failed 1/, status.text);
  const json = JSON.parse((await run(mine, "status", "--json")).text);
  assert.equal(json.tasks.total, 0);

  // Not the port, the identity: a copy of the other workspace's record (server.json, with its
  // live pid and secret) does not make that server this workspace's.
  await Deno.mkdir(join(mine, ".sdd/runtime"), { recursive: true });
  await Deno.copyFile(
    join(other, ".sdd/runtime/server.json"),
    join(mine, ".sdd/runtime/server.json"),
  );
  const copied = await run(mine, "status");
  assert.match(copied.text, /could not prove it serves/);
  assert.doesNotMatch(copied.text, /theirs|failed 1/, copied.text);
  const retry = await run(mine, "retry", "theirs");
  assert.equal(retry.code, 1);
  assert.equal(await statusOf(server.url, "theirs"), "FAILED");
});

Deno.test("a stale server record (its process is gone) is ignored and removed", async () => {
  await using dir = await tempDir();
  const root = await workspaceDir(dir.path, "ws");
  const gone = new Deno.Command("true").spawn();
  await gone.status;
  const record = join(root, ".sdd/runtime/server.json");
  await Deno.mkdir(join(root, ".sdd/runtime"), { recursive: true });
  await Deno.writeTextFile(
    record,
    JSON.stringify({
      pid: gone.pid,
      url: "http://127.0.0.1:9",
      instance: "ab".repeat(32),
      workspace: root,
      started_at: new Date().toISOString(),
    }),
    { mode: 0o600 },
  );
  const status = await run(root, "status");
  assert.equal(status.code, 0, status.text);
  assert.match(status.text, /is gone; its stale record was removed/);
  await assert.rejects(Deno.stat(record), Deno.errors.NotFound);
});

Deno.test("with no server, a command that needs one names TaskStoreUnavailable once, and the fix", async () => {
  await using dir = await tempDir();
  const root = await workspaceDir(dir.path, "ws");
  const claim = await run(root, "backlog", "claim");
  assert.equal(claim.code, 1);
  assert.match(claim.text, /service backlog claim: TaskStoreUnavailable: no server runs/);
  assert.equal(claim.text.match(/TaskStoreUnavailable/g)?.length, 1, claim.text);
  assert.match(claim.text, /fix: start the server in this workspace: `service serve`/);
  const refused = await runDeno(["run", "-A", CLI, "--root", root, "backlog", "claim"], {
    env: { SERVICE_SERVER_URL: "http://127.0.0.1:9" },
  });
  assert.equal(refused.text.match(/TaskStoreUnavailable/g)?.length, 1, refused.text);
  assert.match(refused.text, /TaskStoreUnavailable: connection refused at http:\/\/127\.0\.0\.1:9/);
});

Deno.test("serve writes .sdd/runtime/server.log and its server.json, and removes the record when it stops", async () => {
  await using dir = await tempDir();
  const root = await workspaceDir(dir.path, "ws");
  const record = join(root, ".sdd/runtime/server.json");
  {
    await using server = await startServing([CLI, "--root", root, "serve", "--port", "0"]);
    const published = JSON.parse(await Deno.readTextFile(record));
    assert.equal(published.url, server.url);
    assert.equal(published.pid, server.child.pid);
    assert.equal(published.workspace, await Deno.realPath(root));
    assert.equal((await Deno.stat(record)).mode! & 0o077, 0, "only its owner reads the secret");
  }
  await assert.rejects(Deno.stat(record), Deno.errors.NotFound);
  const log = await Deno.readTextFile(join(root, ".sdd/runtime/server.log"));
  assert.match(log, /^\S+Z listening on http:\/\/127\.0\.0\.1:\d+ \(workspace .*\/ws, pid \d+\)$/m);
  assert.match(log, /^\S+Z stopped \(http:\/\/127\.0\.0\.1:\d+\)$/m);
});

Deno.test("a server.json checked out from a repository (not 600) or naming another machine is never contacted", async () => {
  await using dir = await tempDir();
  const root = await workspaceDir(dir.path, "ws");
  const seen: string[] = [];
  const trap = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
    seen.push(req.headers.get("authorization") ?? "");
    return Response.json({ proof: "x" });
  });
  try {
    const record = join(root, ".sdd/runtime/server.json");
    await Deno.mkdir(join(root, ".sdd/runtime"), { recursive: true });
    const plant = (url: string, mode: number) =>
      Deno.writeTextFile(
        record,
        JSON.stringify({
          pid: Deno.pid, // a live process
          url,
          instance: "ab".repeat(32),
          workspace: root,
          started_at: new Date().toISOString(),
        }),
        { mode },
      ).then(() => Deno.chmod(record, mode));
    const env = { SERVICE_TOKEN: "operator-secret" };
    await plant(`http://127.0.0.1:${trap.addr.port}`, 0o644);
    const planted = await runDeno(["run", "-A", CLI, "--root", root, "status"], { env });
    assert.match(planted.text, /ignored \.sdd\/runtime\/server\.json: it is readable by others/);
    await plant("http://198.51.100.7:8052", 0o600);
    const remote = await runDeno(["run", "-A", CLI, "--root", root, "backlog", "claim"], { env });
    assert.equal(remote.code, 1);
    assert.match(remote.text, /is not on this machine/);
    assert.deepEqual(seen, [], "the token was never sent");
  } finally {
    await trap.shutdown();
  }
});
