import assert from "node:assert/strict";
import { createApp } from "../_app.ts";
import { appContext } from "../../lib/server/serve.ts";

Deno.test("GET /dashboard/review-board serves the page without a token when tokens are on", async () => {
  const name = `PAGE_TEST_TOKEN_${crypto.randomUUID().slice(0, 8)}`;
  Deno.env.set(name, "page-token");
  const root = await Deno.makeTempDir();
  try {
    const tokens = [{ principal: "ops", scope: "operator" as const, token_env: name }];
    const app = createApp(appContext(root, tokens));
    const page = await app.request("/dashboard/review-board");
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type")!, /^text\/html/);
    assert.match(page.headers.get("content-security-policy")!, /script-src 'self'/);
    assert.equal(page.headers.get("cross-origin-opener-policy"), "same-origin");
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    const html = await page.text();
    const src = /<script type="module" src="(\/static\/board-[0-9a-f]{16}\.js)"/.exec(html)?.[1];
    assert.ok(src, "the page links a content-hashed bundle");

    const bundle = await app.request(src);
    assert.equal(bundle.status, 200);
    assert.equal(bundle.headers.get("cache-control"), "public, max-age=31536000, immutable");
    assert.match(bundle.headers.get("content-type")!, /^text\/javascript/);
    assert.ok((await bundle.arrayBuffer()).byteLength > 1000);

    const stale = await app.request("/static/board-0000000000000000.js");
    assert.equal(stale.status, 404);
    await stale.body?.cancel();
    const data = await app.request("/review-board/runs");
    assert.equal(data.status, 401, "the data still needs the token");
    await data.body?.cancel();
  } finally {
    Deno.env.delete(name);
    await Deno.remove(root, { recursive: true });
  }
});
