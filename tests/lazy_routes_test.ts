/**
 * Route handlers imported on first use (routes/_app.ts, lib/http/lazy_route.ts), on the real
 * server over HTTP: a refused request is refused by the defences mounted at start, as before,
 * without importing the handler's module; every route answers once loaded; concurrent first
 * requests import once; a failed import is a JSON 500 that the next request recovers from; the
 * task API's handlers are imported together, or right after the listen with `warmRoutes`.
 */
import assert from "node:assert/strict";
import { startServer } from "../lib/server/serve.ts";
import type { RouteEntry } from "../lib/http/lazy_route.ts";
import type { TokenSpec } from "../lib/auth/tokens.ts";
import { mintWorkerSessionCredential } from "../lib/auth/agent_credentials.ts";
import { createApp, type ServiceApp } from "../routes/_app.ts";
import { ROUTES } from "../routes/_manifest.gen.ts";
import { sweepRoutes } from "./_route_sweep.ts";
import { tempDir } from "./helpers.ts";

/** The manifest's routes, each import counted (and `replace` swapping a route's `load`). */
function countedRoutes(
  replace: Record<string, (load: RouteEntry["load"]) => RouteEntry["load"]> = {},
) {
  const loads = new Map<string, number>();
  const routes = ROUTES.map((r) => {
    const load = replace[r.path]?.(r.load) ?? r.load;
    return {
      ...r,
      load: () => {
        loads.set(r.path, (loads.get(r.path) ?? 0) + 1);
        return load();
      },
    };
  });
  return { routes, loads, count: (path: string) => loads.get(path) ?? 0 };
}

/**
 * The real server over `root` with `routes`; with `warmRoutes` (as `service run`), its warm-up
 * awaited before it is handed back. `tokens`: the token specs in force. `warm()` waits for the
 * hot routes' imports (started by the first request to one of them, or here).
 */
async function serving(
  root: string,
  routes: RouteEntry[],
  options: { tokens?: TokenSpec[]; warmRoutes?: boolean } = {},
) {
  let app: ServiceApp | undefined;
  const server = await startServer({
    root,
    host: "127.0.0.1",
    port: 0,
    tokens: [],
    announce: false,
    warmRoutes: options.warmRoutes,
    app: {
      build: (ctx) => {
        if (options.tokens) ctx.tokenSpecs = () => options.tokens!;
        return app = createApp(ctx, { routes });
      },
    },
  });
  if (options.warmRoutes) await app!.warm();
  return Object.assign(server, {
    warm: () => app!.warm(),
    [Symbol.asyncDispose]: () => server.shutdown(),
  });
}

/**
 * A token variable this process already has (tests never set the environment): its value is
 * the operator's token.
 */
function operatorToken(): { spec: TokenSpec; token: string } {
  for (const name of ["HOME", "USER", "PATH"]) {
    const value = Deno.env.get(name);
    if (value && /^\S+$/.test(value)) {
      return { spec: { principal: "ops", scope: "operator", token_env: name }, token: value };
    }
  }
  throw new Error("no variable without white space to use as the token");
}

const RUNS = "/review-board/runs";
const ACTIONS = "/dashboard/review-board/tasks";

Deno.test("a refused request is refused before its handler's module is imported, with the same answer as after", async () => {
  await using dir = await tempDir();
  const { spec, token } = operatorToken();
  const { routes, count } = countedRoutes();
  await using server = await serving(dir.path, routes, { tokens: [spec] });
  const good = { authorization: `Bearer ${token}` };
  const refusals: [string, RequestInit][] = [
    [RUNS, {}],
    [RUNS, { headers: { authorization: "Bearer not-the-token" } }],
    [RUNS, { headers: { ...good, origin: "http://evil.example" } }],
    [ACTIONS, { method: "POST", headers: { ...good, origin: "http://evil.example" }, body: "{}" }],
    [ACTIONS, { method: "POST", headers: { ...good, "content-type": "text/plain" }, body: "{}" }],
    [ACTIONS, {
      method: "POST",
      headers: { ...good, "content-type": "application/json" },
      body: JSON.stringify({ pad: "x".repeat(2 << 20) }),
    }],
  ];
  const answers = async () => {
    const out: string[] = [];
    for (const [path, init] of refusals) {
      const res = await fetch(`${server.url}${path}`, init);
      out.push(`${res.status} ${await res.text()}`);
    }
    return out;
  };
  const before = await answers();
  assert.deepEqual(before.map((a) => Number(a.slice(0, 3))), [401, 401, 403, 403, 415, 413]);
  for (const a of before) assert.match(a, /^\d{3} \{"error":\{"code":"[a-z_]+","message":"/);
  assert.equal(count(RUNS), 0, "a refused GET imported the runs list");
  assert.equal(count(ACTIONS), 0, "a refused POST imported the review actions");

  // Let a request through: the modules load, and the same refusals answer the same.
  const ok = await fetch(`${server.url}${RUNS}`, { headers: good });
  assert.equal(ok.status, 200, await ok.text());
  const action = await fetch(`${server.url}${ACTIONS}`, {
    method: "POST",
    headers: { ...good, "content-type": "application/json" },
    body: "{}",
  });
  assert.ok(action.status >= 400 && action.status < 500, `${action.status} ${await action.text()}`);
  assert.equal(count(RUNS), 1);
  assert.equal(count(ACTIONS), 1);
  assert.deepEqual(await answers(), before);
});

Deno.test("every route of the manifest answers once its handler is imported (none is a 500)", async () => {
  await using dir = await tempDir();
  const { routes, count } = countedRoutes();
  await using server = await serving(dir.path, routes);
  // Session routes take only a worker's capability for that session.
  const capability = mintWorkerSessionCredential(dir.path, {
    worker: "w1",
    runId: "r1",
    taskId: "t1",
    sessionId: "s1",
  });
  const answers = await sweepRoutes(server.url, {
    authorization: (access) => access === "session" ? `Bearer ${capability}` : undefined,
  });
  assert.equal(answers.length, ROUTES.flatMap((r) => Object.keys(r.policy.access)).length);
  const failed = answers.filter((a) => a.status >= 500);
  assert.deepEqual(failed, [], "routes answering a server error");
  // Every route's module was imported by its request (each once), none refused before it.
  assert.deepEqual(ROUTES.filter((r) => count(r.path) !== 1).map((r) => r.path), []);
  const again = await sweepRoutes(server.url, {
    authorization: (access) => access === "session" ? `Bearer ${capability}` : undefined,
  });
  assert.deepEqual(again.filter((a) => a.status >= 500), []);
  assert.deepEqual(ROUTES.filter((r) => count(r.path) !== 1).map((r) => r.path), []);
});

Deno.test("concurrent first requests to one route import its module once", async () => {
  await using dir = await tempDir();
  const { routes, count } = countedRoutes();
  await using server = await serving(dir.path, routes);
  const path = "/review-board/runs/:run_id/tasks";
  const answers = await Promise.all(
    Array.from(
      { length: 12 },
      () =>
        fetch(`${server.url}/review-board/runs/no-such-run/tasks`).then(async (r) =>
          `${r.status} ${await r.text()}`
        ),
    ),
  );
  assert.equal(count(path), 1);
  assert.equal(new Set(answers).size, 1, answers.join("\n"));
  assert.match(answers[0], /^404 /);
});

Deno.test("a handler whose import fails answers a JSON 500 naming it, and the next request imports it again", async () => {
  await using dir = await tempDir();
  const missing = new URL("./no_such_route_module_for_this_test.ts", import.meta.url).href;
  let attempts = 0;
  const { routes, count } = countedRoutes({
    // The first import is of a module that is not there: a real import failure.
    [RUNS]: (load) => () => attempts++ === 0 ? import(missing) : load(),
  });
  await using server = await serving(dir.path, routes);
  const first = await fetch(`${server.url}${RUNS}`);
  assert.equal(first.status, 500);
  const body = await first.json();
  assert.equal(body.error.code, "internal_error");
  assert.match(
    body.error.message,
    /the handler of GET \/review-board\/runs \(routes\/review-board\/runs\.ts\) could not be loaded: .*the next request tries again/,
  );
  const second = await fetch(`${server.url}${RUNS}`);
  assert.equal(second.status, 200, await second.clone().text());
  assert.ok(Array.isArray((await second.json()).runs));
  assert.equal(count(RUNS), 2);
  const third = await fetch(`${server.url}${RUNS}`);
  assert.equal(third.status, 200);
  await third.body?.cancel();
  assert.equal(count(RUNS), 2, "a loaded module is not imported again");
});

Deno.test("a module whose policy is not the one the manifest mounted is refused with a 500", async () => {
  await using dir = await tempDir();
  const stale = ROUTES.map((r) =>
    r.path === RUNS ? { ...r, policy: { ...r.policy, bodyLimit: r.policy.bodyLimit + 1 } } : r
  );
  await using server = await serving(dir.path, stale);
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${server.url}${RUNS}`);
    assert.equal(res.status, 500);
    assert.match((await res.json()).error.message, /its policy is not the one mounted/);
  }
});

const HOT_ROUTES = ROUTES.map((r) => r.path).filter((p) =>
  /^\/(tasks|workers|webhooks)(\/|$)/.test(p)
);

Deno.test("a server imports no handler before a request; the first request to the task API imports its other handlers too", async () => {
  await using dir = await tempDir();
  const { routes, loads, count } = countedRoutes();
  await using server = await serving(dir.path, routes);
  assert.deepEqual([...loads.keys()], [], "imported before any request");
  const hello = await fetch(`${server.url}/workers/hello`);
  assert.equal(hello.status, 400, await hello.text());
  await server.warm();
  assert.ok(HOT_ROUTES.length > 15);
  assert.deepEqual([...loads.keys()].sort(), [...HOT_ROUTES].sort());
  assert.ok([...loads.values()].every((n) => n === 1));
  assert.equal(count(RUNS), 0);
});

Deno.test("with warmRoutes (service run), the task API, worker and webhook handlers are imported right after the listen; nothing else", async () => {
  await using dir = await tempDir();
  const { routes, loads } = countedRoutes();
  await using _server = await serving(dir.path, routes, { warmRoutes: true });
  assert.deepEqual([...loads.keys()].sort(), [...HOT_ROUTES].sort());
  assert.ok([...loads.values()].every((n) => n === 1));
});
