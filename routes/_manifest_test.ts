/**
 * The checked-in route manifest matches the files under routes/, every route states its policy,
 * the scope matrix of docs/security.md is the one the policies call for, and lib/ stays below
 * routes/.
 */
import assert from "node:assert/strict";
import {
  expectedManifest,
  expectedSecurityDoc,
  SECURITY_DOC,
  unpadTables,
} from "../scripts/gen_routes.ts";
import { manifestText, urlPathOf } from "../lib/http/route_manifest.ts";
import { type RouteModule, samePolicy } from "../lib/http/lazy_route.ts";
import { ROUTE_METHODS, type RouteMethod, type RoutePolicy } from "../lib/http/route_policy.ts";
import { ROUTES } from "./_manifest.gen.ts";

/** The methods a route module exports handlers for. */
function handlerMethods(module: Record<string, unknown>): RouteMethod[] {
  return ROUTE_METHODS.filter((m) => typeof module[m] === "function");
}

/**
 * What is wrong with a route module's policy (pure; empty when nothing): a missing `policy`, a
 * handler without an access entry, an entry without a handler, a public write that is not a
 * signed delivery, a signature-checked route that is not public.
 */
function policyProblems(path: string, module: Record<string, unknown>): string[] {
  const policy = module.policy as RoutePolicy | undefined;
  if (!policy || typeof policy !== "object" || !policy.access) {
    return [`${path} exports no \`policy\` (routePolicy(...) from lib/http/route_policy.ts)`];
  }
  const problems: string[] = [];
  const handlers = handlerMethods(module);
  for (const m of handlers) {
    if (!policy.access[m]) problems.push(`${path}: ${m} has a handler but no access entry`);
  }
  for (const m of Object.keys(policy.access) as RouteMethod[]) {
    if (!handlers.includes(m)) problems.push(`${path}: access names ${m}, which has no handler`);
    const writes = m !== "GET";
    if (writes && policy.access[m] === "public" && !policy.signedDelivery) {
      problems.push(`${path}: public ${m} without a signature check`);
    }
  }
  if (policy.signedDelivery && Object.values(policy.access).some((a) => a !== "public")) {
    problems.push(`${path}: a signed delivery takes no bearer token, so its access is public`);
  }
  if (!Number.isSafeInteger(policy.bodyLimit) || policy.bodyLimit <= 0) {
    problems.push(`${path}: bodyLimit must be a positive number of bytes`);
  }
  return problems;
}

Deno.test("routes/_manifest.gen.ts is up to date (else run `deno task routes`)", async () => {
  const current = await Deno.readTextFile(new URL("./_manifest.gen.ts", import.meta.url));
  assert.equal(current, await expectedManifest(), "stale manifest: run `deno task routes`");
});

/** Every route of the manifest with its module imported. */
function loadedRoutes(): Promise<{ path: string; policy: RoutePolicy; module: RouteModule }[]> {
  return Promise.all(ROUTES.map(async (r) => ({ ...r, module: await r.load() })));
}

Deno.test("every route module exports at least one method handler", async () => {
  for (const route of await loadedRoutes()) {
    const methods = Object.keys(route.module).filter((k) =>
      /^(GET|POST|PUT|PATCH|DELETE)$/.test(k)
    );
    assert.ok(methods.length > 0, `${route.path} exports no GET/POST/… handler`);
  }
  assert.equal(
    urlPathOf("review-board/runs/[run_id]/diff/[task_id].ts"),
    "/review-board/runs/:run_id/diff/:task_id",
  );
});

Deno.test("every route states its policy: an access entry per handler, nothing public unsigned", async () => {
  const routes = await loadedRoutes();
  const problems = routes.flatMap((r) => policyProblems(r.path, r.module));
  assert.deepEqual(problems, []);
  for (const r of routes) {
    // The server mounts the manifest's copy before the module is imported: they must agree.
    assert.deepEqual(r.policy, r.module.policy, `${r.path}: manifest policy`);
    assert.ok(samePolicy(r.module.policy, r.policy), `${r.path}: samePolicy`);
  }
  const changed = { ...routes[0].policy, bodyLimit: routes[0].policy.bodyLimit + 1 };
  assert.equal(samePolicy(changed, routes[0].policy), false);
  assert.equal(samePolicy(undefined, routes[0].policy), false);
});

Deno.test("the manifest names a route file it does not mount yet (a new file makes it stale)", () => {
  const policy = ROUTES[0].policy;
  const files = ROUTES.map((r) => ({ file: r.file, policy: r.policy }));
  const text = manifestText([...files, { file: "brand/new.ts", policy }]);
  assert.notEqual(text, manifestText(files));
  assert.match(text, /load: \(\) => import\("\.\/brand\/new\.ts"\)/);
  // Tests and `_`-prefixed files are never routes.
  assert.equal(
    manifestText([...files, { file: "brand/new_test.ts", policy }]),
    manifestText(files),
  );
});

Deno.test("policyProblems() names a missing policy, a handler without access and a public write", () => {
  const handler = () => new Response();
  assert.match(policyProblems("/x", { GET: handler })[0], /exports no `policy`/);
  const policy = { access: { POST: "public" }, signedDelivery: false, bodyLimit: 1 };
  assert.deepEqual(policyProblems("/x", { GET: handler, POST: handler, policy }), [
    "/x: GET has a handler but no access entry",
    "/x: public POST without a signature check",
  ]);
  const signed = { access: { POST: "worker" }, signedDelivery: true, bodyLimit: 0 };
  assert.deepEqual(policyProblems("/x", { POST: handler, policy: signed }), [
    "/x: a signed delivery takes no bearer token, so its access is public",
    "/x: bodyLimit must be a positive number of bytes",
  ]);
});

Deno.test("docs/security.md's scope matrix is generated from the route policies (else `deno task routes`)", async () => {
  const current = await Deno.readTextFile(SECURITY_DOC);
  assert.equal(
    unpadTables(current),
    unpadTables(await expectedSecurityDoc()),
    "stale scope matrix in docs/security.md: run `deno task routes`",
  );
});
