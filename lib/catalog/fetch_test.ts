import assert from "node:assert/strict";
import { join } from "node:path";
import { CATALOG_FRESH_MS, CatalogUnavailableError, loadCatalog } from "./fetch.ts";
import { catalogSource, CatalogSourceError } from "./source.ts";
import { CatalogRejectedError } from "./validate.ts";
import { catalogText, validEntry } from "./_test_catalog.ts";

interface Seen {
  path: string;
  ifNoneMatch: string | null;
}

/** A catalog server on a free loopback port whose answers the test changes as it goes. */
function catalogServer() {
  const seen: Seen[] = [];
  const hang = Promise.withResolvers<void>();
  const state = { body: catalogText(["memory"]), etag: '"v1"', status: 200, hang: false };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const path = new URL(req.url).pathname;
    seen.push({ path, ifNoneMatch: req.headers.get("if-none-match") });
    if (state.hang) await hang.promise;
    if (state.status !== 200) return new Response("down", { status: state.status });
    if (req.headers.get("if-none-match") === state.etag) return new Response(null, { status: 304 });
    return new Response(state.body, { headers: { etag: state.etag } });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/catalog.json`,
    seen,
    state,
    async [Symbol.asyncDispose]() {
      hang.resolve();
      await server.shutdown();
    },
  };
}

function sourceFor(url: string, mirror?: string) {
  const env: Record<string, string> = { SERVICE_MCP_CATALOG_URL: url };
  if (mirror) env.SERVICE_MCP_CATALOG_MIRROR_URL = mirror;
  return catalogSource(undefined, (n) => env[n], "/");
}

Deno.test("fetch: download, fresh cache without a request, 304 revalidation, --refresh", async () => {
  await using srv = catalogServer();
  const cacheDir = await Deno.makeTempDir();
  let now = 1_000_000;
  const opts = { cacheDir, now: () => now };
  const first = await loadCatalog(sourceFor(srv.url), opts);
  assert.equal(first.how, "downloaded");
  assert.equal(first.catalog.entries[0].id, "memory");
  assert.equal(srv.seen.length, 1);
  assert.equal(srv.seen[0].ifNoneMatch, null);

  now += CATALOG_FRESH_MS - 1;
  const cached = await loadCatalog(sourceFor(srv.url), opts);
  assert.equal(cached.how, "cache");
  assert.equal(srv.seen.length, 1, "a fresh cache makes no request");

  now += 2;
  const revalidated = await loadCatalog(sourceFor(srv.url), opts);
  assert.equal(revalidated.how, "revalidated");
  assert.equal(srv.seen.length, 2);
  assert.equal(srv.seen[1].ifNoneMatch, '"v1"');

  srv.state.body = catalogText(["memory", "files"]);
  srv.state.etag = '"v2"';
  const refreshed = await loadCatalog(sourceFor(srv.url), { ...opts, refresh: true });
  assert.equal(refreshed.how, "downloaded");
  assert.deepEqual(refreshed.catalog.entries.map((e) => e.id), ["memory", "files"]);
  assert.equal(srv.seen.length, 3, "--refresh asks even inside the freshness window");
  await Deno.remove(cacheDir, { recursive: true });
});

Deno.test("fetch: a rejected document lists its violations and keeps the cached copy", async () => {
  await using srv = catalogServer();
  const cacheDir = await Deno.makeTempDir();
  let now = 1_000_000;
  const opts = { cacheDir, now: () => now };
  await loadCatalog(sourceFor(srv.url), opts);
  srv.state.body = JSON.stringify({
    version: 1,
    generated_at: "2026-11-01T12:00:00Z",
    entries: [validEntry({ transports: ["ws"], extra: true })],
  });
  srv.state.etag = '"bad"';
  await assert.rejects(
    () => loadCatalog(sourceFor(srv.url), { ...opts, refresh: true }),
    (e: unknown) => {
      assert.ok(e instanceof CatalogRejectedError);
      assert.match(e.message, /entries\[0\]\.transports\[0\]: each transport must be one of/);
      assert.match(e.message, /entries\[0\]\.extra: unknown field/);
      assert.match(e.message, /cached copy .* is kept/);
      return true;
    },
  );
  now += 10;
  const after = await loadCatalog(sourceFor(srv.url), opts);
  assert.equal(after.how, "cache");
  assert.deepEqual(after.catalog.entries.map((e) => e.id), ["memory"]);
  assert.match(after.warnings[0], /rejected .* using the cached copy/);
  await Deno.remove(cacheDir, { recursive: true });
});

Deno.test("fetch: primary down → the mirror serves; both down → the cache with a warning", async () => {
  await using primary = catalogServer();
  await using mirror = catalogServer();
  const cacheDir = await Deno.makeTempDir();
  let now = 1_000_000;
  const opts = { cacheDir, now: () => now };
  primary.state.status = 503;
  mirror.state.body = catalogText(["from-mirror"]);
  const viaMirror = await loadCatalog(sourceFor(primary.url, mirror.url), opts);
  assert.equal(viaMirror.servedBy, mirror.url);
  assert.equal(viaMirror.catalog.entries[0].id, "from-mirror");
  assert.match(viaMirror.warnings[0], /HTTP 503.*used the mirror/);

  mirror.state.status = 500;
  now += CATALOG_FRESH_MS + 1;
  const kept = await loadCatalog(sourceFor(primary.url, mirror.url), opts);
  assert.equal(kept.how, "cache");
  assert.equal(kept.catalog.entries[0].id, "from-mirror");
  assert.match(kept.warnings[0], /HTTP 503.*HTTP 500.*using the cached catalog/);
  await Deno.remove(cacheDir, { recursive: true });
});

Deno.test("fetch: a server that never answers times out; with no cache that is an error", async () => {
  await using srv = catalogServer();
  srv.state.hang = true;
  const cacheDir = await Deno.makeTempDir();
  const started = performance.now();
  await assert.rejects(
    () => loadCatalog(sourceFor(srv.url), { cacheDir, timeoutMs: 300 }),
    (e: unknown) => {
      assert.ok(e instanceof CatalogUnavailableError);
      assert.match(e.message, /did not answer within .* nothing is cached yet/);
      return true;
    },
  );
  assert.ok(performance.now() - started < 5000);
  await Deno.remove(cacheDir, { recursive: true });
});

Deno.test("fetch: connection refused with a cache keeps working", async () => {
  const cacheDir = await Deno.makeTempDir();
  let url: string;
  {
    await using srv = catalogServer();
    url = srv.url;
    await loadCatalog(sourceFor(url), { cacheDir, now: () => 0 });
  }
  const kept = await loadCatalog(sourceFor(url), { cacheDir, now: () => CATALOG_FRESH_MS * 2 });
  assert.equal(kept.how, "cache");
  assert.match(kept.warnings[0], /cannot reach .* using the cached catalog/);
  await Deno.remove(cacheDir, { recursive: true });
});

Deno.test("fetch: an oversized body is refused without reading all of it", async () => {
  const big = new Uint8Array(50 * 1024 * 1024).fill(0x20);
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    () => new Response(big),
  );
  const cacheDir = await Deno.makeTempDir();
  try {
    await assert.rejects(
      () => loadCatalog(sourceFor(`http://127.0.0.1:${server.addr.port}/c.json`), { cacheDir }),
      /over the \d+-byte limit/,
    );
  } finally {
    await server.shutdown();
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("fetch: a local file; its mtime is the validator", async () => {
  const dir = await Deno.makeTempDir();
  const file = join(dir, "catalog.json");
  await Deno.writeTextFile(file, catalogText(["one"]));
  const cacheDir = join(dir, "cache");
  const first = await loadCatalog(sourceFor(file), { cacheDir });
  assert.equal(first.how, "file");
  const again = await loadCatalog(sourceFor(file), { cacheDir });
  assert.equal(again.how, "cache");
  await Deno.writeTextFile(file, catalogText(["one", "two"]));
  await Deno.utime(file, new Date(), new Date(Date.now() + 5000));
  const changed = await loadCatalog(sourceFor(file), { cacheDir });
  assert.equal(changed.how, "file");
  assert.equal(changed.catalog.entries.length, 2);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("source: settings that cannot work are refused with the fix", () => {
  assert.throws(() => catalogSource(undefined, () => undefined, "/"), /SERVICE_MCP_CATALOG_URL/);
  assert.throws(
    () => sourceFor("http://example.com/c.json"),
    (e: unknown) => e instanceof CatalogSourceError && /use an https URL/.test(e.message),
  );
  assert.throws(() => sourceFor("ftp://example.com/c.json"), /only https URLs and local paths/);
  assert.equal(sourceFor("https://example.com/c.json").primary.kind, "http");
  assert.deepEqual(
    catalogSource(
      { mcp_catalog: { url: "cat.json" } } as never,
      () => undefined,
      "/work",
    ).primary,
    { kind: "file", path: "/work/cat.json" },
  );
});

Deno.test("fetch: every redirect hop is held to the URL rule — loopback to loopback is followed, to plain http elsewhere is refused", async () => {
  await using srv = catalogServer();
  const cacheDir = await Deno.makeTempDir();
  const hop = (location: string) =>
    Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response(null, { status: 301, headers: { location } }),
    );
  const toLoopback = hop(srv.url);
  const toPlainHttp = hop("http://example.com/catalog.json");
  const toFtp = hop("ftp://example.com/catalog.json");
  try {
    const followed = await loadCatalog(
      sourceFor(`http://127.0.0.1:${toLoopback.addr.port}/`),
      { cacheDir },
    );
    assert.equal(followed.catalog.entries[0].id, "memory");
    for (
      const [server, why] of [[toPlainHttp, /uses plain http/], [
        toFtp,
        /not an http\(s\) URL/,
      ]] as const
    ) {
      await assert.rejects(
        () => loadCatalog(sourceFor(`http://127.0.0.1:${server.addr.port}/`), { cacheDir }),
        (e: unknown) => {
          assert.ok(e instanceof CatalogUnavailableError);
          assert.match(e.message, /redirected to .*example\.com\/catalog\.json, which/);
          assert.match(e.message, why);
          assert.match(e.message, /the redirect was refused/);
          return true;
        },
      );
    }
  } finally {
    await Promise.all([toLoopback.shutdown(), toPlainHttp.shutdown(), toFtp.shutdown()]);
    await Deno.remove(cacheDir, { recursive: true });
  }
});
