import assert from "node:assert/strict";
import { createHttpClient, type HttpClientOptions } from "./client.ts";
import { apiWordsOf, HttpApiError } from "./api_error.ts";

/** A service answering from `handler` in process (real Request/Response objects, no port). */
function service(handler: (req: Request, n: number) => Response | Promise<Response>) {
  const seen: Request[] = [];
  const fetchFn = (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push(req);
    return Promise.resolve(handler(req, seen.length));
  };
  return { seen, fetch: fetchFn as typeof fetch };
}

function client(fetchFn: typeof fetch, over: Partial<HttpClientOptions> = {}) {
  const waits: number[] = [];
  const http = createHttpClient({
    service: "Example",
    baseUrl: "https://api.example.test/v1/",
    fetch: fetchFn,
    sleep: (ms) => (waits.push(ms), Promise.resolve()),
    ...over,
  });
  return { http, waits };
}

const failure = (p: Promise<unknown>) => p.then(() => assert.fail("resolved"), (e) => e);

Deno.test("request(): a repeated GET is conditional, and a 304 answers the remembered body and headers", async () => {
  const api = service((req) =>
    req.headers.get("if-none-match") === '"v1"'
      ? new Response(null, { status: 304, headers: { etag: '"v1"', "x-ratelimit-remaining": "9" } })
      : Response.json({ n: 1 }, { headers: { etag: '"v1"', link: "<next>" } })
  );
  const { http } = client(api.fetch, { cacheEntries: 10 });
  const first = await http.request("/things");
  assert.deepEqual([first.status, first.json()], [200, { n: 1 }]);
  const again = await http.request("/things");
  assert.deepEqual([again.status, again.json(), again.headers.get("link")], [
    304,
    { n: 1 },
    "<next>",
  ]);
  assert.equal(again.rate.remaining, 9, "the rate is the 304's own");
  assert.deepEqual(api.seen.map((r) => r.headers.get("if-none-match")), [null, '"v1"']);
  assert.equal(api.seen[0].url, "https://api.example.test/v1/things");
});

Deno.test("request(): Last-Modified validates when there is no ETag; without a cache no GET is conditional", async () => {
  const stamp = "Wed, 21 Oct 2026 07:28:00 GMT";
  const api = service((req) =>
    req.headers.get("if-modified-since") === stamp
      ? new Response(null, { status: 304 })
      : new Response("body", { headers: { "last-modified": stamp } })
  );
  const cached = client(api.fetch, { cacheEntries: 1 }).http;
  await cached.request("/a");
  assert.equal((await cached.request("/a")).text(), "body");
  const plain = client(api.fetch).http;
  await plain.request("/a");
  await plain.request("/a");
  assert.deepEqual(api.seen.map((r) => r.headers.get("if-modified-since")), [
    null,
    stamp,
    null,
    null,
  ]);
});

Deno.test("request(): a 304 to the caller's own validator is an answer with an empty body", async () => {
  const api = service(() => new Response(null, { status: 304 }));
  const { http } = client(api.fetch);
  const answer = await http.request("/c", { headers: { "if-none-match": '"x"' } });
  assert.deepEqual([answer.status, answer.body.length], [304, 0]);
  const unasked = await failure(http.request("/c"));
  assert.ok(unasked instanceof HttpApiError && unasked.status === 304, "a 304 nobody asked for");
});

Deno.test("request(): the time limit ends a silent service as a timeout; the caller's abort stays the caller's", async () => {
  const silent = service((req) =>
    new Promise<Response>((_, reject) =>
      req.signal.addEventListener("abort", () => reject(req.signal.reason))
    )
  );
  const { http } = client(silent.fetch, { timeoutMs: 50 });
  const e = await failure(http.request("/slow?token=abc"));
  assert.ok(e instanceof HttpApiError);
  assert.deepEqual([e.status, e.code, e.retryable], [0, "timeout", true]);
  assert.equal(
    e.message,
    "Example did not answer within 50 ms (GET https://api.example.test/v1/slow)",
  );
  const caller = new AbortController();
  const pending = http.request("/slow", { signal: caller.signal, timeoutMs: 60_000 });
  caller.abort(new Error("the run stopped"));
  assert.equal((await failure(pending)).message, "the run stopped");
});

Deno.test("request(): a refused idempotent request is retried after what the API asked for; a POST never", async () => {
  const answers = [
    () => new Response("busy", { status: 503, headers: { "retry-after": "2" } }),
    () => new Response("slow down", { status: 429 }),
    () => Response.json({ ok: true }),
  ];
  const api = service((_req, n) => answers[n - 1]());
  const { http, waits } = client(api.fetch, { retries: 2 });
  assert.deepEqual((await http.request("/r")).json(), { ok: true });
  assert.deepEqual(waits, [2000, 1000], "Retry-After, then the back-off of the second retry");
  const post = service(() => new Response("busy", { status: 503 }));
  const p = client(post.fetch, { retries: 2 });
  assert.equal((await failure(p.http.request("/r", { method: "POST", json: {} }))).status, 503);
  assert.deepEqual([post.seen.length, p.waits], [1, []]);
});

Deno.test("request(): a POST is sent again only after a refusal its caller's resendWhen says left nothing done", async () => {
  const overloaded = () =>
    Response.json({ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }, {
      status: 529,
      headers: { "retry-after": "3" },
    });
  const answers = [overloaded, () => Response.json({ id: "msgbatch_1" })];
  const api = service((_req, n) => answers[n - 1]());
  const { http, waits } = client(api.fetch, { retries: 2 });
  const resendWhen = (e: HttpApiError) => e.status === 529;
  const created = await http.request("/b", { method: "POST", json: { a: 1 }, resendWhen });
  assert.deepEqual(created.json(), { id: "msgbatch_1" });
  assert.deepEqual([api.seen.length, waits], [2, [3000]], "sent again after the Retry-After");
  assert.equal(await api.seen[1].text(), '{"a":1}', "the same body");
  // A refusal the caller does not name (a 503 here) and a request with no answer: once only.
  for (
    const answer of [
      () => new Response("busy", { status: 503 }),
      () => Promise.reject(new TypeError("reset")),
    ]
  ) {
    const once = service(answer);
    const c = client(once.fetch, { retries: 2 });
    await failure(c.http.request("/b", { method: "POST", json: {}, resendWhen }));
    assert.deepEqual([once.seen.length, c.waits], [1, []]);
  }
});

Deno.test("request(): a wait longer than maxRetryWaitMs, a 4xx and an unanswered request go to the caller at once", async () => {
  const reset = Math.floor(Date.now() / 1000) + 3600;
  const cases: [string, () => Response | Promise<Response>, number][] = [
    [
      "exhausted window",
      () =>
        new Response("{}", {
          status: 403,
          headers: { "x-ratelimit-remaining": "0", "x-ratelimit-reset": String(reset) },
        }),
      403,
    ],
    ["refusal", () => Response.json({ message: "Bad credentials" }, { status: 401 }), 401],
    ["no answer", () => Promise.reject(new TypeError("connection refused")), 0],
  ];
  for (const [name, answer, status] of cases) {
    const api = service(answer);
    const { http, waits } = client(api.fetch, { retries: 3 });
    const e = await failure(http.request("/x"));
    assert.ok(e instanceof HttpApiError, name);
    assert.deepEqual([e.status, api.seen.length, waits], [status, 1, []], name);
    if (status === 403) {
      assert.ok(
        e.retryable && e.retryAfterMs! > 3_500_000,
        "the reset is the caller's to wait for",
      );
    }
  }
});

Deno.test("HttpApiError: what an API answers is escaped, and no query, user, token or key is ever in it", async () => {
  const token = "ghp_s3cretTOKENvalue0123456789";
  const hostile: [string, Response, RegExp][] = [
    [
      "echoed bearer token",
      Response.json({ message: `token ${token} is revoked` }, { status: 401 }),
      /HTTP 401: token \[redacted\] is revoked/,
    ],
    [
      "terminal escapes",
      Response.json({ message: "\x1b]52;c;ZXZpbA==\x07\x1b[2K all merged\r" }, { status: 500 }),
      /HTTP 500: \\x1b\]52;c;ZXZpbA==\\x07\\x1b\[2K all merged\\r$/,
    ],
    [
      "bidi override in plain text",
      new Response("\u202egnp.exe", { status: 502 }),
      /HTTP 502: \\u202egnp\.exe$/,
    ],
    [
      "newline",
      new Response("line one\nOK: merged", { status: 503 }),
      /HTTP 503: line one\\nOK: merged$/,
    ],
  ];
  for (const [name, response, want] of hostile) {
    const api = service(() => response.clone());
    const { http } = client(api.fetch, { headers: { authorization: `Bearer ${token}` } });
    const e = await failure(
      http.request(`https://user:pw@api.example.test/q?access_token=${token}#f`),
    );
    assert.ok(e instanceof HttpApiError, name);
    assert.match(e.message, want, name);
    assert.match(
      e.message,
      /^Example answered GET https:\/\/api\.example\.test\/q with HTTP/,
      name,
    );
    for (const field of [e.message, e.url, e.body, e.apiMessage]) {
      assert.doesNotMatch(
        field,
        // deno-lint-ignore no-control-regex -- raw control characters must not be there
        /s3cret|access_token|pw@|[\x00-\x1f\x7f\u202e]/,
        `${name}: ${field}`,
      );
    }
  }
  const unreachable = service(() =>
    Promise.reject(
      new TypeError(`error sending request for url (https://api.example.test/q?key=${token})`),
    )
  );
  const e = await failure(client(unreachable.fetch).http.request(`/q?key=${token}`));
  assert.equal(
    e.message,
    "cannot reach Example (GET https://api.example.test/v1/q): error sending request for url (https://api.example.test/q)",
  );
});

Deno.test("apiWordsOf() reads the error bodies of every API this program calls", () => {
  const table: [string, string, { message: string; code?: string }][] = [
    ["task API", '{"error":{"code":"lease_expired","message":"the lease ended"}}', {
      message: "the lease ended",
      code: "lease_expired",
    }],
    [
      "Anthropic",
      '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
      { message: "invalid x-api-key" },
    ],
    [
      "OpenAI",
      '{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}',
      { message: "Incorrect API key", code: "invalid_api_key" },
    ],
    ["nested batch error", '{"error":{"error":{"message":"max_tokens: too large"}}}', {
      message: "max_tokens: too large",
    }],
    [
      "GitHub details",
      '{"message":"Validation Failed","errors":[{"message":"A pull request already exists"}]}',
      { message: "Validation Failed: A pull request already exists" },
    ],
    ["GitLab field map", '{"message":{"base":["is invalid"]}}', {
      message: '{"base":["is invalid"]}',
    }],
    ["GitLab OAuth", '{"error":"invalid_token","error_description":"Token was revoked"}', {
      message: "Token was revoked",
    }],
    ["Jira", '{"errorMessages":["Issue does not exist"],"errors":{"summary":"required"}}', {
      message: "Issue does not exist; summary: required",
    }],
    ["GraphQL", '{"errors":[{"message":"Rate limited","extensions":{"code":"RATELIMITED"}}]}', {
      message: "Rate limited",
    }],
    ["HTML", "<html><body>Bad Gateway</body></html>", {
      message: "<html><body>Bad Gateway</body></html>",
    }],
    ["empty", "", { message: "" }],
    ["JSON array", "[1,2]", { message: "[1,2]" }],
    ["long", JSON.stringify({ message: "x".repeat(5000) }), { message: "x".repeat(300) }],
  ];
  for (const [name, body, want] of table) assert.deepEqual(apiWordsOf(body), want, name);
});

Deno.test("request(): JSON in, JSON out; a body that is not JSON is an HttpApiError invalid_json", async () => {
  const api = service(async (req) =>
    req.method === "POST" ? Response.json({ got: await req.json() }) : new Response("<html>")
  );
  const { http } = client(api.fetch, { headers: () => ({ "x-api-key": "k-123456" }) });
  const posted = await http.request("/echo", { method: "POST", json: { a: 1 } });
  assert.deepEqual(posted.json(), { got: { a: 1 } });
  assert.equal(api.seen[0].headers.get("content-type"), "application/json");
  assert.equal(api.seen[0].headers.get("x-api-key"), "k-123456");
  const e = await failure(Promise.resolve().then(async () => (await http.request("/page")).json()));
  assert.ok(e instanceof HttpApiError);
  assert.deepEqual([e.code, e.status, e.body], ["invalid_json", 200, "<html>"]);
});

Deno.test("request(): maxBytes cuts a long body there and says so", async () => {
  const api = service(() => new Response(new Uint8Array(10_000).fill(65)));
  const { http } = client(api.fetch);
  const cut = await http.request("/big", { maxBytes: 4097 });
  assert.deepEqual([cut.body.length, cut.truncated], [4097, true]);
  const whole = await http.request("/big", { maxBytes: 10_000 });
  assert.deepEqual([whole.body.length, whole.truncated], [10_000, false]);
});

Deno.test("request(): with redirect manual a 3xx is an answer the caller follows or refuses", async () => {
  const api = service(() =>
    new Response(null, { status: 302, headers: { location: "http://elsewhere/" } })
  );
  const answer = await client(api.fetch).http.request("/moved", { redirect: "manual" });
  assert.deepEqual([answer.status, answer.headers.get("location")], [302, "http://elsewhere/"]);
});

Deno.test("createHttpClient() refuses options that cannot work when it is made", () => {
  const bad: Partial<HttpClientOptions>[] = [
    { service: " " },
    { baseUrl: "not a url" },
    { timeoutMs: 0 },
    { retries: -1 },
    { cacheEntries: 1.5 },
  ];
  for (const over of bad) {
    assert.throws(() => createHttpClient({ service: "x", ...over }), JSON.stringify(over));
  }
});
