import assert from "node:assert/strict";
import { entrySignatureStatus, importPublicKey, PublicKeyError, signedBytes } from "./signature.ts";
import { validEntry } from "./_test_catalog.ts";

const b64 = (bytes: ArrayBuffer) => btoa(String.fromCharCode(...new Uint8Array(bytes)));

Deno.test("signature: Ed25519 over the canonical entry without signature", async () => {
  const pair = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const publicKey = b64(await crypto.subtle.exportKey("raw", pair.publicKey));
  const key = await importPublicKey(publicKey);
  const entry = validEntry();
  const signature = b64(await crypto.subtle.sign("Ed25519", pair.privateKey, signedBytes(entry)));
  // Key order in the document does not matter: the canonical form sorts keys.
  const reordered = Object.fromEntries(Object.entries({ ...entry, signature }).reverse());
  assert.equal(await entrySignatureStatus(reordered, key), "valid");
  assert.equal(
    await entrySignatureStatus({ ...entry, signature, version_pin: "9.9.9" }, key),
    "invalid",
  );
  assert.equal(await entrySignatureStatus({ ...entry, signature: "!!" }, key), "invalid");
  assert.equal(await entrySignatureStatus(entry, key), "missing");
  assert.equal(await entrySignatureStatus({ ...entry, signature }, undefined), "unchecked");
});

Deno.test("signature: a malformed public key is refused with what it should be", async () => {
  await assert.rejects(() => importPublicKey(btoa("short")), PublicKeyError);
  await assert.rejects(() => importPublicKey("%%%"), /not base64/);
});
