import assert from "node:assert/strict";
import { type SignatureScheme, signBody, verifySignature } from "./signature.ts";

const enc = (s: string) => new TextEncoder().encode(s);

// GitHub's published example (docs: "Validating webhook deliveries").
const GH_SECRET = "It's a Secret to Everybody";
const GH_BODY = "Hello, World!";
const GH_SIG = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17";

Deno.test("signBody reproduces GitHub's published test vector", () => {
  assert.equal(signBody("hub-sha256", GH_SECRET, GH_BODY), GH_SIG);
  assert.equal(signBody("raw-hex", GH_SECRET, GH_BODY), GH_SIG.slice("sha256=".length));
});

const body = enc(GH_BODY);
const hex = GH_SIG.slice(7);

const CASES: [string, SignatureScheme, string, Uint8Array, string | null, boolean][] = [
  ["published vector", "hub-sha256", GH_SECRET, body, GH_SIG, true],
  [
    "hex in upper case is the same digest",
    "hub-sha256",
    GH_SECRET,
    body,
    GH_SIG.toUpperCase().replace("SHA256=", "sha256="),
    true,
  ],
  ["missing header", "hub-sha256", GH_SECRET, body, null, false],
  ["empty header", "hub-sha256", GH_SECRET, body, "", false],
  ["forged digest (one nibble)", "hub-sha256", GH_SECRET, body, GH_SIG.slice(0, -1) + "f", false],
  ["truncated digest", "hub-sha256", GH_SECRET, body, GH_SIG.slice(0, 40), false],
  ["digest without its prefix", "hub-sha256", GH_SECRET, body, hex, false],
  ["sha1 prefix", "hub-sha256", GH_SECRET, body, `sha1=${hex}`, false],
  ["prefix twice", "hub-sha256", GH_SECRET, body, `sha256=${GH_SIG}`, false],
  ["base64 re-encoded digest", "hub-sha256", GH_SECRET, body, `sha256=${btoa(hex)}`, false],
  [
    "re-encoded body (JSON re-serialised)",
    "hub-sha256",
    GH_SECRET,
    enc(' "Hello, World!"'),
    GH_SIG,
    false,
  ],
  ["body with a trailing newline", "hub-sha256", GH_SECRET, enc(GH_BODY + "\n"), GH_SIG, false],
  ["wrong secret", "hub-sha256", "it's a secret to everybody", body, GH_SIG, false],
  ["raw hex valid", "raw-hex", GH_SECRET, body, hex, true],
  ["raw hex with the sha256= prefix", "raw-hex", GH_SECRET, body, GH_SIG, false],
  ["raw hex truncated", "raw-hex", GH_SECRET, body, hex.slice(0, 63), false],
  ["raw hex forged", "raw-hex", GH_SECRET, body, "0".repeat(64), false],
  ["raw hex with spaces around", "raw-hex", GH_SECRET, body, ` ${hex}\t`, true],
  ["raw hex, one digit not hex", "raw-hex", GH_SECRET, body, hex.slice(0, -1) + "g", false],
  // U+0E37's low seven bits are "7": only ASCII digits count.
  ["raw hex, one digit non-ASCII", "raw-hex", GH_SECRET, body, hex.slice(0, -1) + "\u0e37", false],
  ["raw hex one byte longer", "raw-hex", GH_SECRET, body, hex + "00", false],
  ["token equal", "token", "s3cret", body, "s3cret", true],
  ["token prefix", "token", "s3cret", body, "s3cre", false],
  ["token longer", "token", "s3cret", body, "s3cret!", false],
  ["token case", "token", "s3cret", body, "S3CRET", false],
  ["empty secret never verifies", "token", "", body, "", false],
];

for (const [name, scheme, secret, bytes, header, ok] of CASES) {
  Deno.test(`verifySignature: ${name} → ${ok}`, () => {
    assert.equal(verifySignature(bytes, header, { scheme, secret }), ok);
  });
}

Deno.test("verifySignature: every single-nibble change of a valid digest fails", () => {
  for (let i = 0; i < hex.length; i++) {
    const flipped = hex.slice(0, i) + (hex[i] === "0" ? "1" : "0") + hex.slice(i + 1);
    assert.equal(
      verifySignature(body, flipped, { scheme: "raw-hex", secret: GH_SECRET }),
      false,
      `nibble ${i}`,
    );
    assert.equal(
      verifySignature(body, `sha256=${flipped}`, { scheme: "hub-sha256", secret: GH_SECRET }),
      false,
    );
  }
});
