import assert from "node:assert/strict";
import { HttpApiError } from "../http/api_error.ts";
import { HostApi } from "./api.ts";

/** A host that answers from `routes` and records each request's headers. */
function scripted(routes: Record<string, (req: Request) => Response>) {
  const seen: { url: string; ifNoneMatch: string | null }[] = [];
  const fetchFn = (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    seen.push({ url: req.url, ifNoneMatch: req.headers.get("if-none-match") });
    const path = new URL(req.url).pathname + new URL(req.url).search;
    const route = routes[path];
    return Promise.resolve(route ? route(req) : new Response("{}", { status: 404 }));
  };
  return { seen, fetch: fetchFn as typeof fetch };
}

Deno.test("HostApi.get(): a repeated GET is conditional, and a 304 returns the remembered body", async () => {
  const host = scripted({
    "/repos/a/b": (req) =>
      req.headers.get("if-none-match") === '"v1"'
        ? new Response(null, { status: 304, headers: { etag: '"v1"' } })
        : Response.json({ full_name: "a/b" }, { headers: { etag: '"v1"' } }),
  });
  const api = new HostApi(
    "https://h.example",
    () => ({}),
    { fetch: host.fetch, now: Date.now },
    "GitHub",
  );
  assert.deepEqual((await api.get("/repos/a/b")).json, { full_name: "a/b" });
  const again = await api.get("/repos/a/b");
  assert.equal(again.status, 304);
  assert.deepEqual(again.json, { full_name: "a/b" });
  assert.deepEqual(host.seen.map((s) => s.ifNoneMatch), [null, '"v1"']);
});

Deno.test("HostApi.getAll(): follows Link rel=next (GitHub) and X-Next-Page (GitLab)", async () => {
  const host = scripted({
    "/items?page=1": () =>
      Response.json([1, 2], { headers: { link: '<https://h.example/items?page=2>; rel="next"' } }),
    "/items?page=2": () => Response.json([3], { headers: { "x-next-page": "3" } }),
    "/items?page=3": () => Response.json([4]),
  });
  const api = new HostApi(
    "https://h.example",
    () => ({}),
    { fetch: host.fetch, now: Date.now },
    "GitHub",
  );
  assert.deepEqual(await api.getAll("/items?page=1"), [1, 2, 3, 4]);
});

Deno.test("HostApi: a refusal carries the status, the host's words and the permission GitHub names", async () => {
  const host = scripted({
    "/repos/a/b/pulls": () =>
      Response.json({ message: "Resource not accessible by personal access token" }, {
        status: 403,
        headers: {
          "x-accepted-github-permissions": "pull_requests=read",
          "x-ratelimit-remaining": "0",
        },
      }),
  });
  const api = new HostApi("https://h.example", () => ({ authorization: "Bearer secret-token" }), {
    fetch: host.fetch,
    now: Date.now,
  }, "GitHub");
  const e = await api.get("/repos/a/b/pulls").then(() => undefined, (e) => e);
  assert.ok(e instanceof HttpApiError);
  assert.equal(e.status, 403);
  assert.equal(e.hint, "the token needs pull_requests=read");
  assert.match(
    e.message,
    /HTTP 403: Resource not accessible .*\(the token needs pull_requests=read\)/,
  );
  assert.doesNotMatch(e.message, /secret-token/, "the token is never in a message");
  assert.equal(e.rate.remaining, 0);
});
