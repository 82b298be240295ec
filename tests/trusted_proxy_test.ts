/**
 * `server.trusted_proxy` (docs/kubernetes.md "Single sign-on"): the user a single sign-on proxy
 * signed in becomes the principal of review receipts, but only for requests through the proxy's
 * own loopback listener carrying its shared secret; the same header anywhere else is refused and
 * writes nothing. In process (the listener a request came through is the app's `env`), then
 * through a real server's listeners.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createApp } from "../routes/_app.ts";
import { appContext } from "../lib/server/serve.ts";
import { TrustedProxySchema } from "../lib/config/trusted_proxy_schema.ts";
import { verifyJournalText } from "../lib/journal/verify.ts";
import { goldenWorkspace } from "./helpers.ts";
import { loopbackServer } from "./_raw_http.ts";

const suffix = crypto.randomUUID().replaceAll("-", "").slice(0, 8).toUpperCase();
const SECRET_ENV = `SERVICE_TEST_PROXY_SECRET_${suffix}`;
const OPERATOR_ENV = `SERVICE_TEST_PROXY_OP_${suffix}`;
Deno.env.set(SECRET_ENV, "the-proxy-secret");
Deno.env.set(OPERATOR_ENV, "the-operator-token");

const PROXY = TrustedProxySchema.parse({ port: 1, secret_env: SECRET_ENV });
const VIA_PROXY = { agentPath: false, proxyPath: true };
const PUBLIC = { agentPath: false };

function appFor(root: string) {
  return createApp({
    ...appContext(root, [{ principal: "ops", scope: "operator", token_env: OPERATOR_ENV }]),
    trustedProxy: PROXY,
  });
}

function review(
  app: ReturnType<typeof appFor>,
  headers: Record<string, string>,
  env: typeof VIA_PROXY | typeof PUBLIC,
) {
  return app.request("/dashboard/review-board/runs/golden/tasks/t-docs/review", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ decision: "approve", note: "signed in through SSO" }),
  }, env);
}

async function state(root: string): Promise<string[]> {
  const read = (p: string) => Deno.readTextFile(join(root, p)).catch(() => "<absent>");
  return [await read(".sdd/runs/golden/journal.jsonl"), await read(".sdd/audit/audit.jsonl")];
}

Deno.test("trusted proxy: the signed-in user is the principal of the review receipt and its journal row", async () => {
  await using ws = await goldenWorkspace();
  const res = await review(appFor(ws.path), {
    "X-Forwarded-User": "alice@example.com",
    "X-Service-Proxy-Secret": "the-proxy-secret",
  }, VIA_PROXY);
  assert.equal(res.status, 200);
  const { receipt } = await res.json();
  assert.equal(receipt.principal, "alice@example.com");
  assert.equal(receipt.scope, "operator");
  const journal = verifyJournalText(await Deno.readTextFile(join(ws.runDir, "journal.jsonl")));
  assert.equal(journal.rows.at(-1)!.row.data.principal, "alice@example.com");
});

Deno.test("trusted proxy: the user header from anywhere but the proxy is refused and nothing is written", async () => {
  await using ws = await goldenWorkspace();
  const app = appFor(ws.path);
  const before = await state(ws.path);
  const table: [
    string,
    Record<string, string>,
    typeof PUBLIC | typeof VIA_PROXY,
    number,
    string,
  ][] = [
    [
      "the header on the public listener, even with an operator token",
      { "X-Forwarded-User": "mallory", authorization: "Bearer the-operator-token" },
      PUBLIC,
      403,
      "untrusted_user_header",
    ],
    [
      "the header and the proxy's secret on the public listener",
      { "X-Forwarded-User": "mallory", "X-Service-Proxy-Secret": "the-proxy-secret" },
      PUBLIC,
      403,
      "untrusted_user_header",
    ],
    [
      "the proxy's listener without its secret",
      { "X-Forwarded-User": "mallory" },
      VIA_PROXY,
      401,
      "unauthorized",
    ],
    [
      "the proxy's listener with a wrong secret",
      { "X-Forwarded-User": "mallory", "X-Service-Proxy-Secret": "guess" },
      VIA_PROXY,
      401,
      "unauthorized",
    ],
    [
      "the proxy's listener with its secret but nobody signed in",
      { "X-Service-Proxy-Secret": "the-proxy-secret" },
      VIA_PROXY,
      401,
      "unauthorized",
    ],
    [
      "a user name with a line break",
      { "X-Forwarded-User": "alice\u0085root", "X-Service-Proxy-Secret": "the-proxy-secret" },
      VIA_PROXY,
      400,
      "invalid_user",
    ],
  ];
  for (const [what, headers, env, status, code] of table) {
    const res = await review(app, headers, env);
    assert.equal(res.status, status, what);
    assert.equal((await res.json()).error.code, code, what);
  }
  assert.deepEqual(await state(ws.path), before, "nothing was written");
  // The operator's own token still works where the header is not sent.
  const ok = await review(app, { authorization: "Bearer the-operator-token" }, PUBLIC);
  assert.equal(ok.status, 200);
  assert.equal((await ok.json()).receipt.principal, "ops");
});

Deno.test("trusted proxy: a real server believes the header only on its loopback proxy port", async () => {
  await using ws = await goldenWorkspace();
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const proxyPort = (probe.addr as Deno.NetAddr).port;
  probe.close();
  const server = await loopbackServer(ws.path, {
    tokens: [{ principal: "ops", scope: "operator", token_env: OPERATOR_ENV }],
    server: {
      trusted_proxy: TrustedProxySchema.parse({ port: proxyPort, secret_env: SECRET_ENV }),
    },
  });
  try {
    const get = (base: string, headers: Record<string, string>) =>
      fetch(`${base}/review-board/runs`, { headers }).then(async (r) => {
        await r.body?.cancel();
        return r.status;
      });
    const signedIn = {
      "X-Forwarded-User": "alice@example.com",
      "X-Service-Proxy-Secret": "the-proxy-secret",
    };
    assert.equal(await get(`http://127.0.0.1:${proxyPort}`, signedIn), 200);
    assert.equal(await get(`http://127.0.0.1:${proxyPort}`, { "X-Forwarded-User": "alice" }), 401);
    assert.equal(await get(server.url, signedIn), 403, "the public port never takes the header");
    assert.equal(await get(server.url, { authorization: "Bearer the-operator-token" }), 200);
  } finally {
    await server.shutdown();
  }
});

Deno.test("trusted proxy: a server whose proxy secret variable is unset does not start", async () => {
  await using ws = await goldenWorkspace();
  await assert.rejects(
    loopbackServer(ws.path, {
      tokens: [{ principal: "ops", scope: "operator", token_env: OPERATOR_ENV }],
      server: {
        trusted_proxy: TrustedProxySchema.parse({ port: 1, secret_env: `UNSET_${suffix}` }),
      },
    }),
    /server\.trusted_proxy\.secret_env names UNSET_/,
  );
});
