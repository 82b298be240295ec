/**
 * The hostile-client catalogue (docs/security.md): forged origins, rebinding hosts, non-JSON
 * bodies and the rest, each sent as raw bytes to the real server on a loopback port, each with
 * the refusal a user relies on and a check that nothing was written.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadWorkspaceConfig } from "../lib/config/load.ts";
import { CLI, goldenWorkspace } from "./helpers.ts";
import { errorCode, loopbackServer, rawRequest, send } from "./_raw_http.ts";

const REVIEW = "/dashboard/review-board/runs/golden/tasks/t-docs/review";
const APPROVE = JSON.stringify({ decision: "approve" });

async function hostileServer(yaml = "cli: claude\nroles: [backend, docs]\n") {
  const ws = await goldenWorkspace();
  const server = await loopbackServer(ws.path, {
    yaml,
    server: { public_url: "https://board.example.com", allowed_origins: ["https://ops.example"] },
  });
  const journal = join(ws.runDir, "journal.jsonl");
  return {
    port: server.port,
    journalLines: async () => (await Deno.readTextFile(journal)).trim().split("\n").length,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await ws[Symbol.asyncDispose]();
    },
  };
}

interface BrowserCase {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
  status: number;
  code?: string;
}

const host = (port: number) => `127.0.0.1:${port}`;

/** The headers of a subresource a page on another port of this host loads (no Origin). */
const sameSiteLoad = (dest: "script" | "image") => ({
  "sec-fetch-site": "same-site",
  "sec-fetch-mode": "no-cors",
  "sec-fetch-dest": dest,
});

/** The headers a browser sends when a page on another site opens this one (link, frame). */
const crossSiteNavigation = (dest: "document" | "iframe") => ({
  "sec-fetch-site": "cross-site",
  "sec-fetch-mode": "navigate",
  "sec-fetch-dest": dest,
  "sec-fetch-user": "?1",
});

/** Each row: what a page (or attacker) sends, and what the server must answer. */
const BROWSER_CASES: ((port: number) => BrowserCase)[] = [
  (p) => ({
    name: "a simple text/plain POST from a foreign page (the CSRF of the issue)",
    method: "POST",
    path: REVIEW,
    headers: { host: host(p), origin: "https://evil.example", "content-type": "text/plain" },
    body: APPROVE,
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "a JSON POST from a foreign origin",
    method: "POST",
    path: REVIEW,
    headers: {
      host: host(p),
      origin: "http://localhost:9999",
      "content-type": "application/json",
    },
    body: APPROVE,
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "an opaque origin (sandboxed iframe, file://)",
    method: "POST",
    path: "/tasks",
    headers: { host: host(p), origin: "null", "content-type": "application/json" },
    body: JSON.stringify({ title: "x", role: "backend" }),
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "a cross-site fetch without Origin",
    method: "POST",
    path: "/tasks",
    headers: { host: host(p), "sec-fetch-site": "cross-site", "content-type": "application/json" },
    body: JSON.stringify({ title: "x", role: "backend" }),
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "a text/plain body without Origin (curl, a non-browser)",
    method: "POST",
    path: "/tasks",
    headers: { host: host(p), "content-type": "text/plain" },
    body: JSON.stringify({ title: "x", role: "backend" }),
    status: 415,
    code: "unsupported_media_type",
  }),
  (p) => ({
    name: "a form-encoded review",
    method: "POST",
    path: REVIEW,
    headers: { host: host(p), "content-type": "application/x-www-form-urlencoded" },
    body: "decision=merge",
    status: 415,
    code: "unsupported_media_type",
  }),
  (p) => ({
    name: "a body with no Content-Type",
    method: "POST",
    path: REVIEW,
    headers: { host: host(p) },
    body: APPROVE,
    status: 415,
    code: "unsupported_media_type",
  }),
  (p) => ({
    name: "a DNS-rebinding read of the board",
    method: "GET",
    path: "/review-board/runs/golden",
    headers: { host: `evil.example:${p}` },
    status: 403,
    code: "forbidden_host",
  }),
  (p) => ({
    name: "a DNS-rebinding read of the page",
    method: "GET",
    path: "/dashboard/review-board",
    headers: { host: `rebind.evil.example:${p}` },
    status: 403,
    code: "forbidden_host",
  }),
  (p) => ({
    name: "a DNS-rebinding write, even same-origin to the rebinding host",
    method: "POST",
    path: REVIEW,
    headers: {
      host: `evil.example:${p}`,
      origin: `http://evil.example:${p}`,
      "content-type": "application/json",
    },
    body: APPROVE,
    status: 403,
    code: "forbidden_host",
  }),
  (p) => ({
    name: "a link to the board page followed from another site (a pull request's body)",
    method: "GET",
    path: "/dashboard/review-board?run=golden&task=t-docs",
    headers: { host: host(p), ...crossSiteNavigation("document") },
    status: 200,
  }),
  (p) => ({
    name: "a followed link from another site to the board's data",
    method: "GET",
    path: "/review-board/runs/golden",
    headers: { host: host(p), ...crossSiteNavigation("document") },
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "the board page framed by another site",
    method: "GET",
    path: "/dashboard/review-board",
    headers: { host: host(p), ...crossSiteNavigation("iframe") },
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "a cross-site fetch of the board page",
    method: "GET",
    path: "/dashboard/review-board",
    headers: {
      host: host(p),
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "no-cors",
      "sec-fetch-dest": "empty",
    },
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "a followed link to the board page under a rebinding name",
    method: "GET",
    path: "/dashboard/review-board",
    headers: { host: `evil.example:${p}`, ...crossSiteNavigation("document") },
    status: 403,
    code: "forbidden_host",
  }),
  (p) => ({
    name: "a page on another port of this host loads the board as a script (same-site, no Origin)",
    method: "GET",
    path: "/review-board/runs/golden",
    headers: { host: host(p), ...sameSiteLoad("script") },
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "a page on another port of this host holds the event stream open with an <img>",
    method: "GET",
    path: "/events",
    headers: { host: host(p), ...sameSiteLoad("image") },
    status: 403,
    code: "forbidden_origin",
  }),
  (p) => ({
    name: "a link on another port of this host opens the board page",
    method: "GET",
    path: "/dashboard/review-board",
    headers: { host: host(p), ...crossSiteNavigation("document"), "sec-fetch-site": "same-site" },
    status: 200,
  }),
  (p) => ({
    name: "the page's own bundle, loaded from another port of this host (carries no data)",
    method: "GET",
    path: "/static/nope.js",
    headers: { host: host(p), ...sameSiteLoad("script") },
    status: 404,
  }),
  (p) => ({
    name: "a Host that starts like [::1] but names another host",
    method: "GET",
    path: "/review-board/runs",
    headers: { host: `[::1].evil.example:${p}` },
    status: 403,
    code: "forbidden_host",
  }),
  (p) => ({
    name: "the IPv6 loopback with its port",
    method: "GET",
    path: "/review-board/runs",
    headers: { host: `[::1]:${p}` },
    status: 200,
  }),
  (p) => ({
    name: "the board's own same-origin read",
    method: "GET",
    path: "/review-board/runs/golden",
    headers: { host: host(p), origin: `http://${host(p)}` },
    status: 200,
  }),
  (p) => ({
    name: "localhost by name",
    method: "GET",
    path: "/status",
    headers: { host: `localhost:${p}` },
    status: 200,
  }),
  (_p) => ({
    name: "the public_url host behind a reverse proxy",
    method: "GET",
    path: "/review-board/runs",
    headers: { host: "board.example.com", origin: "https://board.example.com" },
    status: 200,
  }),
  (p) => ({
    name: "an allowed origin",
    method: "GET",
    path: "/review-board/runs",
    headers: { host: host(p), origin: "https://ops.example" },
    status: 200,
  }),
  (p) => ({
    name: "a bodyless POST from a script (no Content-Type needed)",
    method: "POST",
    path: "/tasks/nope/heartbeat",
    headers: { host: host(p) },
    status: 404,
  }),
];

Deno.test("hostile browsers: forged origins, rebinding hosts and non-JSON bodies are refused", async () => {
  await using server = await hostileServer();
  const before = await server.journalLines();
  for (const make of BROWSER_CASES) {
    const c = make(server.port);
    const answer = await send(server.port, rawRequest(c.method, c.path, c.headers, c.body));
    assert.equal(answer.status, c.status, `${c.name}: ${answer.body}`);
    if (c.code) assert.equal(errorCode(answer), c.code, c.name);
  }
  assert.equal(await server.journalLines(), before, "no refused request wrote to the journal");
});

Deno.test("a request without a Host header (HTTP/1.0) is refused as naming no server, not as the gate's socket path", async () => {
  await using server = await hostileServer();
  const answer = await send(
    server.port,
    new TextEncoder().encode("GET /review-board/runs HTTP/1.0\r\n\r\n"),
  );
  assert.equal(answer.status, 403, answer.body);
  assert.equal(errorCode(answer), "forbidden_host");
  assert.match(JSON.parse(answer.body).error.message, /^the request has no Host header/);
  assert.doesNotMatch(answer.body, /sock/);
});

Deno.test("the board's own JSON POST (same origin, application/json) still records a review", async () => {
  await using server = await hostileServer();
  const before = await server.journalLines();
  const answer = await send(
    server.port,
    rawRequest("POST", REVIEW, {
      host: host(server.port),
      origin: `http://${host(server.port)}`,
      "content-type": "application/json; charset=utf-8",
    }, APPROVE),
  );
  assert.equal(answer.status, 200, answer.body);
  assert.equal(await server.journalLines(), before + 1);
});

/**
 * Stream a chunked body of up to `total` bytes, stopping as soon as the server's answer head
 * arrives: its status and how much had been written by then.
 */
async function chunkedFlood(port: number, path: string, total: number) {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let head = "";
  let answered = false;
  const reading = (async () => {
    const buf = new Uint8Array(4096);
    while (!head.includes("\r\n\r\n")) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      head += new TextDecoder().decode(buf.subarray(0, n));
    }
    answered = true;
  })();
  const chunk = new TextEncoder().encode("10000\r\n" + "a".repeat(0x10000) + "\r\n");
  let written = 0;
  try {
    await conn.write(rawRequest("POST", path, {
      host: `127.0.0.1:${port}`,
      "content-type": "application/json",
      "transfer-encoding": "chunked",
    }));
    while (!answered && written < total) {
      await conn.write(chunk);
      written += chunk.length;
    }
  } catch { /* the server closed the connection: the point */ }
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([reading, new Promise((r) => timer = setTimeout(r, 10_000))]);
  clearTimeout(timer);
  try {
    conn.close();
  } catch { /* closed */ }
  await reading;
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0), written, head };
}

const BODY_ROUTES = [
  "/tasks",
  "/tasks/next?role=backend",
  "/tasks/x/claim",
  "/tasks/x/heartbeat",
  "/tasks/x/complete",
  "/tasks/x/fail",
  "/tasks/x/cancel",
  "/tasks/x/reopen",
  "/tasks/x/retry",
  REVIEW,
];

Deno.test("bodies are bounded while read: declared or chunked, on every route, 413 before buffering", async () => {
  await using server = await hostileServer();
  const before = await server.journalLines();
  for (const path of BODY_ROUTES) {
    const declared = await send(
      server.port,
      rawRequest("POST", path, {
        host: host(server.port),
        "content-type": "application/json",
        "content-length": String(2 << 20),
      }),
    );
    assert.equal(declared.status, 413, `${path} (declared 2 MiB): ${declared.body}`);
    assert.equal(errorCode(declared), "body_too_large");
    const flood = await chunkedFlood(server.port, path, 64 << 20);
    assert.equal(flood.status, 413, `${path} (chunked flood): ${flood.head}`);
    assert.ok(flood.written < 16 << 20, `${path}: ${flood.written} bytes went in before the 413`);
  }
  // A path no route serves answers 404 before reading a byte of the body, flood or not.
  const nowhere = await send(
    server.port,
    rawRequest("POST", "/no/such/route", {
      host: host(server.port),
      "content-type": "application/json",
      "content-length": String(2 << 20),
    }),
  );
  assert.equal(nowhere.status, 404, nowhere.body);
  const lost = await chunkedFlood(server.port, "/no/such/route", 64 << 20);
  assert.equal(lost.status, 404, lost.head);
  assert.ok(lost.written < 16 << 20, `${lost.written} bytes went in before the 404`);
  // Four parallel 64 MiB floods: each is cut off at the limit, memory stays flat.
  const rss = Deno.memoryUsage().rss;
  const floods = await Promise.all(
    [1, 2, 3, 4].map(() => chunkedFlood(server.port, "/tasks", 64 << 20)),
  );
  for (const f of floods) assert.equal(f.status, 413);
  const grown = (Deno.memoryUsage().rss - rss) / (1 << 20);
  assert.ok(grown < 64, `RSS grew ${grown.toFixed(0)} MiB under four floods`);
  assert.equal(await server.journalLines(), before);
  const fine = await send(
    server.port,
    rawRequest("GET", "/status", { host: host(server.port) }),
  );
  assert.equal(fine.status, 200);
});

Deno.test("a client that disconnects mid-body leaves no stack trace and the server serves on", async () => {
  await using server = await hostileServer();
  const logged: unknown[] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => logged.push(args);
  try {
    const framings: Record<string, string>[] = [
      { "content-length": "1000" },
      { "transfer-encoding": "chunked" },
    ];
    for (const framing of framings) {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: server.port });
      await conn.write(rawRequest("POST", "/tasks", {
        host: host(server.port),
        "content-type": "application/json",
        ...framing,
      }));
      await conn.write(new TextEncoder().encode(framing["content-length"] ? '{"ti' : '4\r\n{"ti'));
      conn.close();
    }
    const fine = await send(server.port, rawRequest("GET", "/status", { host: host(server.port) }));
    assert.equal(fine.status, 200);
  } finally {
    console.error = original;
  }
  assert.deepEqual(logged, []);
});

const TOKENS_YAML = `cli: claude
roles: [backend, docs]
auth:
  tokens:
    - {principal: op, scope: operator, token_env: H_OP_TOKEN}
    - {principal: bot, scope: worker, token_env: H_WORKER_TOKEN}
    - {principal: viewer, scope: reader, token_env: H_READER_TOKEN}
`;

Deno.test("auth fails closed: serve refuses to start while a configured token variable is unset or empty", async () => {
  await using ws = await goldenWorkspace();
  await Deno.writeTextFile(join(ws.path, "service.yaml"), TOKENS_YAML);
  const envs: Record<string, string>[] = [
    { H_OP_TOKEN: "op", H_READER_TOKEN: "r" },
    { H_OP_TOKEN: "op", H_WORKER_TOKEN: "", H_READER_TOKEN: "r" },
  ];
  for (const env of envs) {
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", ws.path, "serve", "--port", "0"],
      env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 1, text);
    assert.match(text, /H_WORKER_TOKEN \(principal "bot"\)/);
    assert.match(text, /export H_WORKER_TOKEN=<secret>/);
    assert.doesNotMatch(text, /listening/);
    const doctor = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", CLI, "--root", ws.path, "doctor"],
      env: { NO_COLOR: "1", RUST_BACKTRACE: "0", ...env },
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(30_000),
    }).output();
    const said = new TextDecoder().decode(doctor.stdout) + new TextDecoder().decode(doctor.stderr);
    assert.match(said, /H_WORKER_TOKEN \(principal bot\).*refuse to start/);
  }
});

Deno.test("scopes gate the task API: readers read, workers work tasks, operators create and review", async () => {
  await using ws = await goldenWorkspace();
  await Deno.writeTextFile(join(ws.path, "service.yaml"), TOKENS_YAML);
  const env = {
    H_OP_TOKEN: "op-secret",
    H_WORKER_TOKEN: "worker-secret",
    H_READER_TOKEN: "reader-secret",
  };
  for (const [k, v] of Object.entries(env)) Deno.env.set(k, v);
  const server = await loopbackServer(ws.path, {
    yaml: "",
    tokens: (await loadWorkspaceConfig(ws.path)).server.tokens,
  });
  try {
    const call = async (token: string, method: string, path: string, body?: unknown) => {
      const headers: Record<string, string> = {
        host: host(server.port),
        authorization: `Bearer ${token}`,
      };
      if (body !== undefined) headers["content-type"] = "application/json";
      const a = await send(
        server.port,
        rawRequest(method, path, headers, body === undefined ? undefined : JSON.stringify(body)),
      );
      return a.status;
    };
    const rows: [string, string, string, unknown, number][] = [
      ["reader-secret", "GET", "/tasks", undefined, 200],
      ["reader-secret", "GET", "/review-board/runs/golden", undefined, 200],
      ["reader-secret", "POST", "/tasks", { id: "r1", title: "R", role: "backend" }, 403],
      ["worker-secret", "POST", "/tasks", { id: "w1", title: "W", role: "backend" }, 403],
      ["op-secret", "POST", "/tasks", { id: "k", title: "K", role: "backend" }, 201],
      ["reader-secret", "POST", "/tasks/k/claim", { session_id: "s" }, 403],
      ["reader-secret", "POST", "/tasks/next?role=backend", {}, 403],
      ["worker-secret", "POST", "/tasks/k/claim", { session_id: "s" }, 200],
      ["reader-secret", "POST", "/tasks/k/heartbeat", undefined, 403],
      ["reader-secret", "POST", "/tasks/k/complete", {}, 403],
      ["worker-secret", "POST", "/tasks/k/cancel", {}, 403],
      ["worker-secret", "POST", "/tasks/k/complete", { summary: "done" }, 200],
      ["reader-secret", "POST", REVIEW, { decision: "approve" }, 403],
      ["worker-secret", "POST", REVIEW, { decision: "approve" }, 403],
      ["wrong", "GET", "/tasks", undefined, 401],
      ["op-secret", "POST", REVIEW, { decision: "approve" }, 200],
    ];
    for (const [token, method, path, body, status] of rows) {
      assert.equal(await call(token, method, path, body), status, `${token} ${method} ${path}`);
    }
    // A variable emptied while serving fails closed: its token matches nothing.
    Deno.env.set("H_READER_TOKEN", "");
    assert.equal(await call("", "GET", "/tasks"), 401);
  } finally {
    await server.shutdown();
    for (const k of Object.keys(env)) Deno.env.delete(k);
  }
});

/** Each row: a body for POST /tasks (or the review), and the exact refusal. */
const INPUT_CASES: {
  name: string;
  path?: string;
  body: string | Uint8Array;
  status: number;
  code: string;
  message: RegExp;
}[] = [
  {
    name: "a title of the wrong type",
    body: JSON.stringify({ title: 5, role: "backend" }),
    status: 400,
    code: "invalid_body",
    message: /^title: expected string, received number$/,
  },
  {
    name: "a priority of the wrong type in a batch",
    body: JSON.stringify({
      tasks: [{ title: "a", role: "backend" }, { title: "b", role: "backend", priority: "high" }],
    }),
    status: 400,
    code: "invalid_body",
    message: /^tasks\[1\]\.priority: expected number, received string$/,
  },
  {
    name: "a missing role",
    body: JSON.stringify({ title: "x" }),
    status: 400,
    code: "invalid_body",
    message: /^role: expected string, received undefined$/,
  },
  {
    name: "a role that climbs out of the template directory",
    body: JSON.stringify({ title: "x", role: "../../etc" }),
    status: 400,
    code: "invalid_body",
    message: /^role: expected a role name/,
  },
  {
    name: "invalid UTF-8",
    body: new Uint8Array([
      ...new TextEncoder().encode('{"title":"'),
      0xc3,
      0x28,
      ...new TextEncoder().encode('","role":"backend"}'),
    ]),
    status: 400,
    code: "invalid_utf8",
    message: /bad byte 0xc3 at offset 10/,
  },
  {
    name: "a duplicate key in a review (the last value would have won)",
    path: REVIEW,
    body: '{"decision":"bogus","decision":"approve"}',
    status: 400,
    code: "duplicate_key",
    message: /repeats the key "decision"/,
  },
  {
    name: "a duplicate key inside a batch member",
    body: '{"tasks":[{"title":"a","role":"backend","role":"docs"}]}',
    status: 400,
    code: "duplicate_key",
    message: /"role" in the object at tasks\[0\]/,
  },
];

Deno.test("hostile input: exact messages naming field and type; bad UTF-8, duplicate keys and path-like roles refused", async () => {
  // No service.yaml: role names are still checked against the template directory pattern.
  await using server = await hostileServer("");
  const before = await server.journalLines();
  for (const c of INPUT_CASES) {
    const answer = await send(
      server.port,
      rawRequest("POST", c.path ?? "/tasks", {
        host: host(server.port),
        "content-type": "application/json",
      }, c.body),
    );
    assert.equal(answer.status, c.status, `${c.name}: ${answer.body}`);
    const error = JSON.parse(answer.body).error;
    assert.equal(error.code, c.code, c.name);
    assert.match(error.message, c.message, c.name);
  }
  const listed = await send(server.port, rawRequest("GET", "/tasks", { host: host(server.port) }));
  assert.deepEqual(JSON.parse(listed.body).tasks, [], "nothing was created");
  assert.equal(await server.journalLines(), before);
});
