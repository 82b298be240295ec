/**
 * The board behind a reverse proxy (docs/security.md): Chromium opens it under a public name
 * (`board.example`, resolved to loopback by Chromium itself), a proxy forwards to the loopback
 * server rewriting `Host` as nginx does by default, so only `Origin` carries the public name.
 * With `server.public_url` the page reads and reviews; without it the review is refused and the
 * page says why.
 */
import assert from "node:assert/strict";
import { launchChromiumContext } from "../_chromium.ts";
import { goldenWorkspace } from "../helpers.ts";
import { loopbackServer } from "../_raw_http.ts";

async function proxiedBoard(publicUrl: boolean) {
  const ws = await goldenWorkspace();
  let upstream = "";
  const proxy = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    const headers = new Headers(req.headers);
    headers.delete("host"); // proxy_set_header Host $proxy_host
    const body = req.method === "GET" || req.method === "HEAD"
      ? undefined
      : await req.arrayBuffer();
    const answer = await fetch(`${upstream}${url.pathname}${url.search}`, {
      method: req.method,
      headers,
      body,
    }).catch(() => new Response("upstream down", { status: 502 }));
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  });
  const publicBase = `http://board.example:${proxy.addr.port}`;
  const server = await loopbackServer(ws.path, {
    server: publicUrl ? { public_url: publicBase } : {},
  });
  upstream = server.url;
  const profile = await Deno.makeTempDir({ prefix: "proxy-chromium-" });
  const rest = async () => {
    await server.shutdown();
    await proxy.shutdown();
    await Deno.remove(profile, { recursive: true }).catch(() => {});
    await ws[Symbol.asyncDispose]();
  };
  let context;
  try {
    context = await launchChromiumContext(profile, {
      args: ["--host-resolver-rules=MAP board.example 127.0.0.1"],
    });
  } catch (e) {
    await rest(); // a browser that does not start leaves nothing behind
    throw e;
  }
  const page = context.pages()[0] ?? await context.newPage();
  return {
    page,
    publicBase,
    async [Symbol.asyncDispose]() {
      await context.close();
      await rest();
    },
  };
}

Deno.test("board page behind a reverse proxy with server.public_url: reads and reviews work", async () => {
  await using board = await proxiedBoard(true);
  const { page } = board;
  await page.goto(`${board.publicBase}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator("[data-projection-hash]").waitFor();
  const [request] = await Promise.all([
    page.waitForRequest((r) => r.method() === "POST"),
    page.click("button[data-decision=approve]"),
  ]);
  assert.equal((await request.allHeaders())["origin"], board.publicBase);
  await page.locator("[data-review-receipt]").waitFor();
  assert.match(
    (await page.locator("[data-review-receipt]").textContent())!,
    /decisionapprove/,
  );
});

Deno.test("board page behind a reverse proxy without server.public_url: the review is refused, and says why", async () => {
  await using board = await proxiedBoard(false);
  const { page } = board;
  await page.goto(`${board.publicBase}/dashboard/review-board?run=golden&task=t-docs`);
  await page.locator("[data-projection-hash]").waitFor(); // reads carry no Origin: same-origin GET
  await page.click("button[data-decision=approve]");
  const error = page.locator("[data-action-error='403']");
  await error.waitFor();
  assert.match((await error.textContent())!, /does not trust the address.*server\.public_url/s);
});
