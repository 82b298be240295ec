/**
 * Hostile connections against the real server on loopback (docs/security.md "Connections"):
 * silent and slow clients, idle keep-alives, a full connection table, too many event streams
 * and a process out of descriptors. Timeouts are set small so every case ends in seconds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { ServerBlock } from "../lib/config/schema.ts";
import { CLI, goldenWorkspace } from "./helpers.ts";
import { errorCode, loopbackServer, rawRequest, readAnswer, send } from "./_raw_http.ts";

const encoder = new TextEncoder();

async function limitedServer(server: Partial<ServerBlock>) {
  const ws = await goldenWorkspace();
  const running = await loopbackServer(ws.path, { server });
  return {
    port: running.port,
    running,
    async [Symbol.asyncDispose]() {
      await running.shutdown();
      await ws[Symbol.asyncDispose]();
    },
  };
}

const connect = (port: number) => Deno.connect({ hostname: "127.0.0.1", port });
const status = (port: number) =>
  send(port, rawRequest("GET", "/status", { host: `127.0.0.1:${port}` }));

/** True when the server closes `c` (EOF) within `ms`. */
async function closedWithin(c: Deno.Conn, ms: number): Promise<boolean> {
  const buf = new Uint8Array(1024);
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const n = await Promise.race([
      c.read(buf).catch(() => null),
      new Promise<"t">((r) => timer = setTimeout(() => r("t"), deadline - Date.now())),
    ]);
    clearTimeout(timer);
    if (n === null) return true;
    if (n === "t") return false;
  }
  return false;
}

function closeQuietly(c: Deno.Conn) {
  try {
    c.close();
  } catch { /* closed */ }
}

Deno.test("a silent connection and a slowloris head are cut at the header timeout (408)", async () => {
  await using s = await limitedServer({ header_timeout_s: 0.5, idle_timeout_s: 30 });
  const started = Date.now();
  const silent = await connect(s.port);
  const slow = await connect(s.port);
  // One header byte every 100 ms: activity, but the head never completes in time.
  const head = "GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: " + "a".repeat(200);
  const drip = (async () => {
    for (const ch of head) {
      if ((await slow.write(encoder.encode(ch)).catch(() => 0)) === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const [a, b] = await Promise.all([readAnswer(silent, 5000), readAnswer(slow, 5000)]);
  await drip;
  for (const answer of [a, b]) {
    assert.equal(answer.status, 408, answer.body);
    assert.equal(errorCode(answer), "request_timeout");
  }
  assert.ok(await closedWithin(silent, 2000));
  assert.ok(await closedWithin(slow, 2000));
  assert.ok(Date.now() - started < 3000, "cut within a few header timeouts");
  closeQuietly(silent);
  closeQuietly(slow);
  const answer = await status(s.port);
  assert.equal(answer.status, 200);
  assert.ok(s.running.connections().headerTimeouts >= 2);
  // `/status` tells the operator what the gate did.
  assert.ok(JSON.parse(answer.body).connections.header_timeouts >= 2, answer.body);
});

Deno.test("a request head past 64 KiB (a browser's cookies for the host name) gets 431 with the reason, and the server serves on", async () => {
  await using s = await limitedServer({});
  const big = await send(
    s.port,
    rawRequest("GET", "/dashboard/review-board", {
      host: `127.0.0.1:${s.port}`,
      cookie: `other_app=${"x".repeat(70 * 1024)}`,
    }),
  );
  assert.equal(big.status, 431, big.body);
  assert.equal(errorCode(big), "head_too_large");
  assert.match(JSON.parse(big.body).error.message, /64 KiB.*cookie/);
  assert.equal(big.headers.get("connection"), "close");
  assert.equal((await status(s.port)).status, 200);
});

Deno.test("a keep-alive connection is timed on its second head too, and closed when idle", async () => {
  await using s = await limitedServer({ header_timeout_s: 0.5, idle_timeout_s: 1 });
  const c = await connect(s.port);
  await c.write(rawRequest("GET", "/status", { host: "127.0.0.1", connection: "keep-alive" }));
  const first = await readAnswer(c, 3000);
  assert.equal(first.status, 200);
  await c.write(encoder.encode("GET /status HTTP/1.1\r\nHost: 127.0.0.1\r\n")); // never ends
  const second = await readAnswer(c, 3000);
  assert.equal(second.status, 408);
  closeQuietly(c);

  const idle = await connect(s.port);
  await idle.write(rawRequest("GET", "/status", { host: "127.0.0.1", connection: "keep-alive" }));
  const started = Date.now();
  const answer = await readAnswer(idle, 5000);
  assert.equal(answer.status, 200);
  assert.ok(await closedWithin(idle, 4000), "the idle keep-alive was closed");
  assert.ok(Date.now() - started < 4000);
  closeQuietly(idle);
});

Deno.test("at the connection cap idle clients make room; busy ones get 503 with Retry-After", async () => {
  await using s = await limitedServer({
    max_connections: 6,
    max_event_streams: 10,
    header_timeout_s: 30,
  });
  const silent = await Promise.all([1, 2, 3, 4, 5, 6].map(() => connect(s.port)));
  await new Promise((r) => setTimeout(r, 100));
  // The table is full of silent connections: the newest request still answers.
  assert.equal((await status(s.port)).status, 200);
  assert.ok(s.running.connections().evicted >= 1);
  for (const c of silent) closeQuietly(c);

  // Six open event streams are busy (a request in flight): a seventh client is refused.
  const streams = await Promise.all([1, 2, 3, 4, 5, 6].map(async () => {
    const c = await connect(s.port);
    await c.write(rawRequest("GET", "/events", { host: "127.0.0.1", connection: "keep-alive" }));
    const buf = new Uint8Array(1024);
    await c.read(buf); // the `ready` frame
    return c;
  }));
  await new Promise((r) => setTimeout(r, 100));
  const refused = await status(s.port);
  assert.equal(refused.status, 503, refused.body);
  assert.equal(refused.headers.get("retry-after"), "1");
  assert.equal(errorCode(refused), "server_busy");
  for (const c of streams) closeQuietly(c);
  let ok = 0;
  for (let i = 0; i < 50 && ok !== 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    ok = (await status(s.port)).status;
  }
  assert.equal(ok, 200, "room again once the streams closed");
});

Deno.test("event streams beyond server.max_event_streams get 503 too_many_streams", async () => {
  await using s = await limitedServer({ max_event_streams: 2 });
  const open = await Promise.all([1, 2].map(async () => {
    const c = await connect(s.port);
    await c.write(rawRequest("GET", "/events", { host: "127.0.0.1", connection: "keep-alive" }));
    await c.read(new Uint8Array(1024));
    return c;
  }));
  const third = await send(s.port, rawRequest("GET", "/events", { host: "127.0.0.1" }));
  assert.equal(third.status, 503);
  assert.equal(errorCode(third), "too_many_streams");
  assert.equal(third.headers.get("retry-after"), "5");
  for (const c of open) closeQuietly(c);
});

Deno.test("running out of descriptors refuses connections instead of ending the process", async () => {
  await using ws = await goldenWorkspace();
  await Deno.writeTextFile(
    join(ws.path, "service.yaml"),
    "cli: claude\nroles: [backend]\nserver: {max_connections: 5000, header_timeout_s: 60}\n",
  );
  // sh's $0/$1/$2 carry the deno binary, cli.ts and the workspace.
  const proc = new Deno.Command("sh", {
    args: [
      "-c",
      `ulimit -n 128 && exec "$0" run -A "$1" --root "$2" serve --port 0`,
      Deno.execPath(),
      CLI,
      ws.path,
    ],
    env: { NO_COLOR: "1", RUST_BACKTRACE: "0" },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  while (!/listening on http:\/\/[^:]+:(\d+)/.test(out)) {
    const { value, done } = await reader.read();
    if (done) break;
    out += value;
  }
  const port = Number(/listening on http:\/\/[^:]+:(\d+)/.exec(out)![1]);
  const held: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 300; i++) {
      try {
        held.push(await connect(port));
      } catch {
        break;
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    // Still alive: no exit status yet.
    const exited = await Promise.race([
      proc.status.then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 200)),
    ]);
    assert.equal(exited, false, "the server process is still running");
  } finally {
    for (const c of held) closeQuietly(c);
  }
  let answer = 0;
  for (let i = 0; i < 100 && answer !== 200; i++) {
    await new Promise((r) => setTimeout(r, 50));
    answer = (await status(port).catch(() => ({ status: 0 }))).status;
  }
  assert.equal(answer, 200, "serving again once the descriptors are back");
  proc.kill("SIGTERM");
  await proc.status;
  reader.releaseLock();
  await proc.stdout.cancel().catch(() => {});
  const err = await new Response(proc.stderr).text();
  assert.doesNotMatch(err, /Uncaught|panicked/);
  assert.match(err, /accept failed \(Too many open files/, "the test did exhaust descriptors");
});
