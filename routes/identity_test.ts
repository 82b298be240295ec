import assert from "node:assert/strict";
import { createApp } from "./_app.ts";
import { appContext } from "../lib/server/serve.ts";
import { identityProof, type ServerIdentity } from "../lib/discovery/identity.ts";
import type { TokenSpec } from "../lib/auth/tokens.ts";

const IDENTITY: ServerIdentity = { instance: "5e".repeat(32), workspace: "/work/project" };
const NONCE = "0123456789abcdef".repeat(2);

function appWith(identity: ServerIdentity | undefined, tokens: TokenSpec[] = []) {
  return createApp({ ...appContext("/tmp", tokens), identity });
}

Deno.test("GET /identity proves the workspace for the nonce and shows nothing else", async () => {
  const res = await appWith(IDENTITY).request(`/identity?nonce=${NONCE}`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("cache-control"), "no-store");
  assert.equal(res.headers.get("access-control-allow-origin"), null);
  const body = await res.json();
  assert.deepEqual(Object.keys(body), ["proof"]);
  assert.equal(body.proof, identityProof(IDENTITY, NONCE));
  assert.doesNotMatch(JSON.stringify(body), /5e5e|\/work\/project/);
  const other = identityProof({ ...IDENTITY, workspace: "/work/copy" }, NONCE);
  assert.notEqual(body.proof, other, "a copy of the workspace elsewhere gets another proof");
});

Deno.test("GET /identity refuses a bad nonce, a foreign page and a missing token", async () => {
  for (const nonce of ["", "abc", "Z".repeat(32), "a".repeat(130)]) {
    const res = await appWith(IDENTITY).request(`/identity?nonce=${nonce}`);
    assert.equal(res.status, 400, nonce);
    assert.equal((await res.json()).error.code, "invalid_nonce");
  }
  const page = await appWith(IDENTITY).request(`/identity?nonce=${NONCE}`, {
    headers: { origin: "https://evil.example" },
  });
  assert.equal(page.status, 403);
  await page.body?.cancel();
  const name = `IDENTITY_TEST_TOKEN_${crypto.randomUUID().slice(0, 8)}`;
  Deno.env.set(name, "reader-token");
  try {
    const guarded = appWith(IDENTITY, [{ principal: "ops", scope: "reader", token_env: name }]);
    const denied = await guarded.request(`/identity?nonce=${NONCE}`);
    assert.equal(denied.status, 401);
    await denied.body?.cancel();
    const allowed = await guarded.request(`/identity?nonce=${NONCE}`, {
      headers: { authorization: "Bearer reader-token" },
    });
    assert.equal(allowed.status, 200);
    await allowed.body?.cancel();
  } finally {
    Deno.env.delete(name);
  }
  const none = await appWith(undefined).request(`/identity?nonce=${NONCE}`);
  assert.equal(none.status, 404);
  await none.body?.cancel();
});
